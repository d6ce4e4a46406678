package dev.idempo.autoconfigure.web.servlet;

import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotentHandlerFailureAnalyzer}: an {@code @Idempotent} Spring MVC
 * handler that idempo cannot honour fails start-up with a report naming it.
 *
 * @author idempo
 */
class IdempotentHandlerFailureAnalyzerTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
				DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class));

	@Test
	void invalidAnnotationTtlFailsStartupNamingTheHandler() {
		this.contextRunner.withUserConfiguration(BadTtlController.class).run((context) -> {
			assertThat(context).getFailure()
				.hasStackTraceContaining("@Idempotent(ttl = \"soon\")")
				.hasStackTraceContaining("BadTtlController");
			// the report a bean method's bad ttl gets
			// (IdempotentMethodsAutoConfigurationTests)
			FailureAnalysis analysis = new IdempotentHandlerFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).startsWith("idempo cannot protect the handler ")
				.contains(BadTtlController.class.getName() + "#bad()")
				.contains("@Idempotent(ttl = \"soon\")")
				.contains("is not a valid duration: 'soon' is not a valid duration");
			assertThat(analysis.getAction()).contains("a positive Spring duration of at most 36500d");
		});
	}

	@RestController
	static class BadTtlController {

		@PostMapping("/bad")
		@Idempotent(ttl = "soon")
		Map<String, String> bad() {
			return Map.of();
		}

	}

}
