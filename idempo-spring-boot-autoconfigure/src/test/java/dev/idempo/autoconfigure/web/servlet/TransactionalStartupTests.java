package dev.idempo.autoconfigure.web.servlet;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.web.IdempotentHandlerException;
import dev.idempo.web.IdempotentHandlers;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.method.HandlerMethod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Start-up checks of transactional handlers: a store without transactional mode, and
 * handlers whose response cannot be committed with their writes, fail the application
 * naming the handler and what to change.
 *
 * @author idempo
 */
class TransactionalStartupTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
				DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class));

	@Test
	void transactionalHandlerOnTheMemoryStoreFailsStartupNamingHandlerAndProperty() {
		this.contextRunner.withUserConfiguration(TransactionalController.class)
			.withPropertyValues("idempo.store.type=memory")
			.run((context) -> {
				assertThat(context).getFailure()
					.isInstanceOf(IdempotentHandlerException.class)
					.hasMessageContaining("@Idempotent(transactional = true)")
					.hasMessageContaining("TransactionalController")
					.hasMessageContaining("idempo.store.type is memory");
				IdempotentHandlerException cause = (IdempotentHandlerException) rootCause(context.getStartupFailure());
				FailureAnalysis analysis = new IdempotentHandlerFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains(cause.getHandler());
				assertThat(analysis.getAction()).contains("idempo.store.type");
			});
	}

	@Test
	void transactionalPropertyOnTheMemoryStoreFailsStartupNamingTheProperty() {
		this.contextRunner.withUserConfiguration(PlainController.class)
			.withPropertyValues("idempo.store.type=memory", "idempo.transactional=true")
			.run((context) -> assertThat(context).getFailure()
				.isInstanceOf(IdempotentHandlerException.class)
				.hasMessageContaining("idempo.transactional=true")
				.hasMessageContaining("PlainController"));
	}

	@Test
	void nonTransactionalHandlersStartOnTheMemoryStore() {
		this.contextRunner.withUserConfiguration(PlainController.class)
			.withPropertyValues("idempo.store.type=memory")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void transactionalHandlerThatCachesNothingIsRejected() throws Exception {
		assertThatExceptionOfType(IdempotentHandlerException.class)
			.isThrownBy(() -> transactionalHandlers().policy(handler("lockOnly")))
			.withMessageContaining("cacheResponse = false");
	}

	@Test
	void transactionalHandlerWithAnAsynchronousResultIsRejected() throws Exception {
		assertThatExceptionOfType(IdempotentHandlerException.class)
			.isThrownBy(() -> transactionalHandlers().policy(handler("later")))
			.withMessageContaining("Callable");
		assertThatExceptionOfType(IdempotentHandlerException.class)
			.isThrownBy(() -> transactionalHandlers().policy(handler("laterEntity")))
			.withMessageContaining("asynchronous");
	}

	@Test
	void transactionalHandlerWhosePolicyDoesNotStoreEverySuccessIsRejected() throws Exception {
		for (ResponseStoragePolicy responses : List.of(ResponseStoragePolicy.of(List.of("201", "4xx"), List.of()),
				ResponseStoragePolicy.of(List.of("2xx"), List.of("202")))) {
			IdempotentHandlers handlers = new IdempotentHandlers((value) -> value, Duration.ofHours(1), false, null,
					responses, FingerprintOptions.NONE);
			assertThatExceptionOfType(IdempotentHandlerException.class)
				.isThrownBy(() -> handlers.policy(handler("pay")))
				.withMessageContaining("needs every 2xx response stored")
				.withMessageContaining("idempo.responses");
			assertThat(handlers.policy(handler("plain"))).as("a plain handler may store what it likes").isNotNull();
		}
		IdempotentHandlers storingServerErrors = new IdempotentHandlers((value) -> value, Duration.ofHours(1), false,
				null, ResponseStoragePolicy.of(List.of("2xx", "5xx"), List.of("503")), FingerprintOptions.NONE);
		assertThat(storingServerErrors.policy(handler("pay"))).isNotNull();
	}

	@Test
	void transactionalHandlerWithABodyIsAccepted() throws Exception {
		IdempotentHandlers.Policy policy = transactionalHandlers().policy(handler("pay"));
		assertThat(policy).isNotNull();
		assertThat(policy.transactional()).isTrue();
		assertThat(new IdempotentHandlers((value) -> value, Duration.ofHours(1)).policy(handler("plain")))
			.extracting(IdempotentHandlers.Policy::transactional)
			.isEqualTo(false);
	}

	private static IdempotentHandlers transactionalHandlers() {
		return new IdempotentHandlers((value) -> value, Duration.ofHours(1), false, null);
	}

	private static HandlerMethod handler(String name) throws NoSuchMethodException {
		for (java.lang.reflect.Method method : Handlers.class.getDeclaredMethods()) {
			if (method.getName().equals(name)) {
				return new HandlerMethod(new Handlers(), method);
			}
		}
		throw new NoSuchMethodException(name);
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		return cause;
	}

	@RestController
	static class TransactionalController {

		@PostMapping("/pay")
		@Idempotent(transactional = true)
		Map<String, String> pay() {
			return Map.of();
		}

	}

	@RestController
	static class PlainController {

		@PostMapping("/plain")
		@Idempotent
		Map<String, String> plain() {
			return Map.of();
		}

	}

	static class Handlers {

		@Idempotent(transactional = true)
		Map<String, String> pay() {
			return Map.of();
		}

		@Idempotent
		Map<String, String> plain() {
			return Map.of();
		}

		@Idempotent(transactional = true, cacheResponse = false)
		Map<String, String> lockOnly() {
			return Map.of();
		}

		@Idempotent(transactional = true)
		Callable<String> later() {
			return () -> "";
		}

		@Idempotent(transactional = true)
		ResponseEntity<Callable<String>> laterEntity() {
			return ResponseEntity.ok(() -> "");
		}

	}

}
