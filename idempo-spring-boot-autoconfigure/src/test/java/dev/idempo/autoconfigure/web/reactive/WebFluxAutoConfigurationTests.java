package dev.idempo.autoconfigure.web.reactive;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.Lease;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.web.IdempotencyInterceptor;
import dev.idempo.webflux.IdempotencyWebFilter;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.FailureHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux side of {@link IdempotencyAutoConfiguration}: the web filter in reactive
 * applications only, the offloaded reactive store unless one is defined, and
 * transactional handlers and bad TTLs refused at start-up with Boot's failure report.
 *
 * @author idempo
 */
class WebFluxAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner contextRunner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class, IdempotencyAutoConfiguration.class));

	@Test
	void reactiveApplicationGetsTheWebFilterOnTheMemoryStoreServedInline() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyWebFilter.class).doesNotHaveBean(IdempotencyInterceptor.class);
			assertThat(context).getBean("idempotencyReactiveLockingStore")
				.isInstanceOfSatisfying(InlineLockingStore.class,
						(store) -> assertThat(store.delegate()).isInstanceOf(InMemoryLockingStore.class));
		});
	}

	@Test
	void reactiveStoreDefinedBeforeWins() {
		this.contextRunner.withUserConfiguration(OwnReactiveStore.class).run((context) -> {
			assertThat(context).hasSingleBean(ReactiveLockingStore.class)
				.doesNotHaveBean("idempotencyReactiveLockingStore");
			assertThat(context.getBean(ReactiveLockingStore.class)).isSameAs(OwnReactiveStore.STORE);
		});
	}

	@Test
	void servletApplicationGetsNoWebFilter() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyWebFilter.class));
	}

	@Test
	void transactionalHandlerFailsStartUpNamingIt() {
		this.contextRunner.withUserConfiguration(TransactionalController.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContaining("@Idempotent(transactional = true) on the WebFlux handler")
				.hasMessageContaining("TransactionalController#pay");
		});
	}

	@Test
	void transactionalHandlerGetsAFailureReportNamingItAndWhatToDo() {
		this.contextRunner.withUserConfiguration(TransactionalController.class).run((context) -> {
			FailureAnalysis analysis = analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).startsWith("idempo cannot protect the WebFlux handler ")
				.contains(TransactionalController.class.getName() + "#pay()")
				.contains("@Idempotent(transactional = true)");
			assertThat(analysis.getAction())
				.startsWith("Remove transactional = true from the handler, or serve it from a Spring MVC application");
		});
	}

	@Test
	void transactionalPropertyGetsAFailureReportNamingTheHandlerAndTheProperty() {
		this.contextRunner.withUserConfiguration(IdempotentController.class)
			.withPropertyValues("idempo.transactional=true")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains(IdempotentController.class.getName() + "#pay()")
					.contains("idempo.transactional=true");
				assertThat(analysis.getAction()).startsWith("Set idempo.transactional=false");
			});
	}

	@Test
	void badTtlFailsStartUpNamingTheHandler() {
		this.contextRunner.withUserConfiguration(BadTtlController.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining("@Idempotent(ttl = \"soon\")")
				.hasMessageContaining("BadTtlController#pay");
			FailureAnalysis analysis = analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains(BadTtlController.class.getName() + "#pay()")
				.contains("'soon' is not a valid duration");
			assertThat(analysis.getAction()).contains("a positive Spring duration of at most 36500d");
		});
	}

	/**
	 * What idempo's failure analyzers, as {@code META-INF/spring.factories} registers
	 * them for Boot's failure report, make of a start-up failure. Boot's own analyzers,
	 * which need constructor arguments, are left out.
	 * @param failure the start-up failure
	 * @return the first analysis
	 */
	private static FailureAnalysis analyze(Throwable failure) {
		List<FailureAnalyzer> analyzers = SpringFactoriesLoader
			.forDefaultResourceLocation(WebFluxAutoConfigurationTests.class.getClassLoader())
			.load(FailureAnalyzer.class, FailureHandler.handleMessage((message, ex) -> {
			}));
		List<FailureAnalysis> analyses = analyzers.stream()
			.filter((analyzer) -> analyzer.getClass().getName().startsWith("dev.idempo."))
			.map((analyzer) -> analyzer.analyze(failure))
			.filter(Objects::nonNull)
			.toList();
		assertThat(analyses).as("analyses of %s", failure).isNotEmpty();
		return analyses.get(0);
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnReactiveStore {

		static final ReactiveLockingStore STORE = new ReactiveLockingStore() {

			@Override
			public Mono<ClaimResult> claim(String key, Duration lockTtl) {
				return Mono.just(ClaimResult.InProgress.instance());
			}

			@Override
			public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
				return Mono.just(false);
			}

			@Override
			public Mono<Boolean> release(Lease lease) {
				return Mono.just(false);
			}

		};

		@Bean
		ReactiveLockingStore ownReactiveStore() {
			return STORE;
		}

	}

	@RestController
	static class TransactionalController {

		@PostMapping("/pay")
		@Idempotent(transactional = true)
		Mono<String> pay() {
			return Mono.just("paid");
		}

	}

	@RestController
	static class IdempotentController {

		@PostMapping("/pay")
		@Idempotent
		Mono<String> pay() {
			return Mono.just("paid");
		}

	}

	@RestController
	static class BadTtlController {

		@PostMapping("/pay")
		@Idempotent(ttl = "soon")
		Mono<String> pay() {
			return Mono.just("paid");
		}

	}

}
