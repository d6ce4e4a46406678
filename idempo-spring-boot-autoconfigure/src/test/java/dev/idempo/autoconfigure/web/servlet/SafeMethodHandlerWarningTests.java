package dev.idempo.autoconfigure.web.servlet;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @Idempotent} on a handler mapped only to GET, HEAD, OPTIONS or TRACE protects
 * nothing (those requests pass through untouched): the start-up logs one warning naming
 * the handler. A handler that also takes a POST, and handlers of a controller annotated
 * at class level, are not warned about.
 *
 * @author idempo
 */
@ExtendWith(OutputCaptureExtension.class)
class SafeMethodHandlerWarningTests {

	private static final String WARNING = "protects nothing";

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
				DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class));

	@Test
	void eachAnnotatedHandlerMappedToSafeMethodsOnlyIsWarnedAboutOnce(CapturedOutput output) {
		this.contextRunner.withUserConfiguration(SafeController.class).run((context) -> {
			assertThat(context).hasNotFailed();
			List<String> warnings = warnings(output);
			assertThat(warnings).hasSize(2);
			assertThat(warnings).anySatisfy((line) -> assertThat(line).contains("WARN")
				.contains(SafeController.class.getName() + "#list()")
				.contains("mapped to GET only"));
			assertThat(warnings)
				.anySatisfy((line) -> assertThat(line).contains(SafeController.class.getName() + "#probe()")
					.contains("HEAD, OPTIONS"));
		});
	}

	@Test
	void aHandlerThatTakesAPostIsNotWarnedAbout(CapturedOutput output) {
		this.contextRunner.withUserConfiguration(UnsafeController.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(warnings(output)).isEmpty();
		});
	}

	@Test
	void handlersOfAControllerAnnotatedAtClassLevelAreNotWarnedAbout(CapturedOutput output) {
		this.contextRunner.withUserConfiguration(ClassLevelController.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(warnings(output)).isEmpty();
		});
	}

	private static List<String> warnings(CapturedOutput output) {
		return output.getOut().lines().filter((line) -> line.contains(WARNING)).toList();
	}

	@RestController
	static class SafeController {

		@GetMapping("/orders")
		@Idempotent
		List<String> list() {
			return List.of();
		}

		@RequestMapping(path = "/orders", method = { RequestMethod.HEAD, RequestMethod.OPTIONS })
		@Idempotent
		void probe() {
		}

		@GetMapping("/orders/count")
		int count() {
			return 0;
		}

	}

	@RestController
	static class UnsafeController {

		@PostMapping("/orders")
		@Idempotent
		Map<String, String> create() {
			return Map.of();
		}

		@RequestMapping(path = "/orders/{id}", method = { RequestMethod.GET, RequestMethod.PUT })
		@Idempotent
		Map<String, String> getOrPut() {
			return Map.of();
		}

		@RequestMapping("/orders/any")
		@Idempotent
		Map<String, String> any() {
			return Map.of();
		}

	}

	@RestController
	@Idempotent
	static class ClassLevelController {

		@GetMapping("/invoices")
		List<String> list() {
			return List.of();
		}

		@PostMapping("/invoices")
		Map<String, String> create() {
			return Map.of();
		}

	}

}
