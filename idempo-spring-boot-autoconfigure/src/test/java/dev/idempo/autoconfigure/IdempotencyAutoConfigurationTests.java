package dev.idempo.autoconfigure;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.metrics.IdempotencyMetricsAutoConfiguration;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.MicrometerIdempotencyListener;
import dev.idempo.core.ObservedReactiveLockingStore;
import dev.idempo.method.ReactiveIdempotentCalls;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.web.CallerScopeResolver;
import dev.idempo.web.DefaultCallerScopeResolver;
import dev.idempo.web.IdempotencyFilter;
import dev.idempo.web.IdempotencyInterceptor;
import dev.idempo.web.IdempotencyResponseBodyAdvice;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ClassPathResource;
import org.springframework.test.util.ReflectionTestUtils;
import org.springframework.util.StreamUtils;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyAutoConfiguration} and
 * {@link IdempotencyMetricsAutoConfiguration}.
 *
 * @author idempo
 */
class IdempotencyAutoConfigurationTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class));

	@Test
	void defaultsToTheMemoryStoreAndWiresTheRequestFlow() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(InMemoryLockingStore.class);
			assertThat(context).hasSingleBean(LockingStore.class);
			assertThat(context).hasSingleBean(IdempotencyInterceptor.class);
			assertThat(context).hasSingleBean(IdempotencyResponseBodyAdvice.class);
			assertThat(context.getBean(CallerScopeResolver.class)).isInstanceOf(DefaultCallerScopeResolver.class);
			FilterRegistrationBean<?> registration = context.getBean("idempotencyFilterRegistration",
					FilterRegistrationBean.class);
			assertThat(registration.getFilter()).isInstanceOf(IdempotencyFilter.class);
			assertThat(registration.getOrder()).isZero();
			IdempotencyProperties properties = context.getBean(IdempotencyProperties.class);
			assertThat(properties.toSettings()).isEqualTo(IdempotencySettings.defaults());
		});
	}

	/**
	 * Reactive calls run the in-memory store on the subscriber's thread, observed as the
	 * blocking path's is.
	 */
	@Test
	void reactiveCallsRunTheMemoryStoreInline() {
		this.contextRunner.run((context) -> {
			Object claims = ReflectionTestUtils.getField(context.getBean(ReactiveIdempotentCalls.class), "claims");
			Object store = ReflectionTestUtils.getField(claims, "store");
			assertThat(store).isInstanceOf(ObservedReactiveLockingStore.class);
			assertThat(ReflectionTestUtils.getField(store, "delegate")).isInstanceOf(InlineLockingStore.class);
		});
	}

	@Test
	void memoryStoreIsExplicitlySelectable() {
		this.contextRunner.withPropertyValues("idempo.store.type=memory")
			.run((context) -> assertThat(context).hasSingleBean(InMemoryLockingStore.class));
	}

	@Test
	void userBeansWin() {
		this.contextRunner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).hasSingleBean(LockingStore.class);
			assertThat(context.getBean(LockingStore.class)).isSameAs(UserBeans.STORE);
			assertThat(context).doesNotHaveBean(InMemoryLockingStore.class);
			assertThat(context.getBean(CallerScopeResolver.class)).isSameAs(UserBeans.SCOPE);
		});
	}

	@Test
	void propertiesBind() {
		this.contextRunner
			.withPropertyValues("idempo.key-header=Request-Key", "idempo.key-header-aliases=X-Request-Key",
					"idempo.key-required=true", "idempo.response-ttl=2h", "idempo.lock-ttl=10s",
					"idempo.max-response-size=2MB", "idempo.excluded-headers=Set-Cookie,X-Trace",
					"idempo.filter-order=-50", "idempo.conflict.retry-after=3s", "idempo.conflict.wait-timeout=1500ms",
					"idempo.store-failure.mode=fail-open", "idempo.store-failure.retry-after=7s",
					"idempo.store.memory.max-entries=5", "idempo.store.memory.max-size=1MB")
			.run((context) -> {
				IdempotencySettings settings = context.getBean(IdempotencyProperties.class).toSettings();
				assertThat(settings.keyHeader()).isEqualTo("Request-Key");
				assertThat(settings.keyHeaderAliases()).containsExactly("X-Request-Key");
				assertThat(settings.keyRequired()).isTrue();
				assertThat(settings.responseTtl()).isEqualTo(Duration.ofHours(2));
				assertThat(settings.lockTtl()).isEqualTo(Duration.ofSeconds(10));
				assertThat(settings.maxResponseSize()).isEqualTo(2 * 1024 * 1024);
				assertThat(settings.isReplayable("x-trace")).isFalse();
				assertThat(settings.isReplayable("Date")).isTrue();
				assertThat(settings.isReplayable("Content-Length")).isFalse();
				assertThat(settings.conflictRetryAfter()).isEqualTo(Duration.ofSeconds(3));
				assertThat(settings.conflictWaitTimeout()).isEqualTo(Duration.ofMillis(1500));
				assertThat(settings.failOpen()).isTrue();
				assertThat(settings.storeFailureRetryAfter()).isEqualTo(Duration.ofSeconds(7));
				assertThat(context.getBean("idempotencyFilterRegistration", FilterRegistrationBean.class).getOrder())
					.isEqualTo(-50);
			});
	}

	@Test
	void invalidPropertyValuesFailStartup() {
		this.contextRunner.withPropertyValues("idempo.lock-ttl=0s")
			.run((context) -> assertThat(context).getFailure().rootCause().hasMessageContaining("lockTtl"));
		this.contextRunner.withPropertyValues("idempo.response-ttl=36501d")
			.run((context) -> assertThat(context).getFailure().rootCause().hasMessageContaining("responseTtl"));
		this.contextRunner.withPropertyValues("idempo.store.type=cassandra")
			.run((context) -> assertThat(context).hasFailed());
	}

	@Test
	void canBeDisabled() {
		this.contextRunner.withPropertyValues("idempo.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotencyInterceptor.class);
			assertThat(context).doesNotHaveBean(LockingStore.class);
		});
	}

	@Test
	void backsOffOutsideServletWebApplications() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyInterceptor.class));
	}

	@Test
	void publishesMetricsWhenAMeterRegistryExists() {
		WebApplicationContextRunner runner = this.contextRunner.withConfiguration(
				AutoConfigurations.of(IdempotencyMetricsAutoConfiguration.class, IdempotencyAutoConfiguration.class));
		runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			assertThat(context).hasSingleBean(MicrometerIdempotencyListener.class);
			assertThat(context.getBean(MeterRegistry.class).find("idempo.requests").counters()).isNotEmpty();
		});
		runner.run((context) -> assertThat(context).doesNotHaveBean(MicrometerIdempotencyListener.class));
	}

	@Test
	void publishesTheMemoryStoresSizeAndEvictions() {
		WebApplicationContextRunner runner = this.contextRunner.withConfiguration(AutoConfigurations.of(
				org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
				org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class,
				IdempotencyMetricsAutoConfiguration.class, IdempotencyAutoConfiguration.class));
		runner.withPropertyValues("idempo.store.memory.max-entries=1").run((context) -> {
			InMemoryLockingStore store = context.getBean(InMemoryLockingStore.class);
			for (String key : List.of("aa01", "aa02")) {
				Lease lease = ((ClaimResult.Acquired) store.claim(key, Duration.ofSeconds(30))).lease();
				store.complete(lease, new StoredRecord("f", new byte[10]), Duration.ofHours(1));
			}
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("idempo.store.memory.entries").gauge().value()).isEqualTo(1.0);
			assertThat(registry.get("idempo.store.memory.size").gauge().value()).isPositive();
			assertThat(
					registry.get("idempo.store.memory.evictions").tag("reason", "capacity").functionCounter().count())
				.isEqualTo(1.0);
			assertThat(registry.get("idempo.store.memory.evictions").tag("reason", "expired").functionCounter().count())
				.isZero();
		});
	}

	@Test
	void annotationTtlBeyondHundredYearsFailsStartupNamingTheHandler() {
		this.contextRunner
			.withConfiguration(
					AutoConfigurations.of(DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class))
			.withUserConfiguration(LongTtlController.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("(resolved to \"36501d\")")
				.hasStackTraceContaining("at most 36500d"));
		this.contextRunner
			.withConfiguration(
					AutoConfigurations.of(DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class))
			.withUserConfiguration(LongTtlController.class)
			.withPropertyValues("payments.ttl=36500d")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void annotationTtlPlaceholdersResolve() {
		this.contextRunner
			.withConfiguration(
					AutoConfigurations.of(DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class))
			.withUserConfiguration(PlaceholderTtlController.class)
			.withPropertyValues("payments.ttl=45m")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failureAnalyzerNamesTheStoreAndTheAction() {
		FailureAnalysis analysis = new IdempotencyFailureAnalyzer()
			.analyze(new IdempotencyStoreUnavailableException(IdempotencyProperties.StoreType.REDIS,
					"no RedisConnectionFactory", "Add spring-boot-starter-data-redis"));
		assertThat(analysis.getDescription()).contains("'redis'").contains("idempo.store.type");
		assertThat(analysis.getAction()).contains("spring-boot-starter-data-redis");
	}

	@Test
	void everyAfterNameClassExists() throws Exception {
		List<String> names = new ArrayList<>();
		for (Class<?> type : List.of(IdempotencyAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class)) {
			AutoConfiguration annotation = type.getAnnotation(AutoConfiguration.class);
			names.addAll(List.of(annotation.afterName()));
			names.addAll(List.of(annotation.beforeName()));
		}
		assertThat(names).isNotEmpty();
		for (String name : names) {
			assertThat(Class.forName(name)).as(name).isNotNull();
		}
	}

	@Test
	void autoConfigurationsAreRegistered() throws Exception {
		String imports = resource("META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports");
		assertThat(imports.lines()).contains(IdempotencyAutoConfiguration.class.getName(),
				IdempotencyMetricsAutoConfiguration.class.getName());
	}

	@Test
	void configurationMetadataDescribesEveryProperty() throws Exception {
		String metadata = resource("META-INF/spring-configuration-metadata.json");
		for (String property : List.of("idempo.enabled", "idempo.key-header", "idempo.key-required",
				"idempo.response-ttl", "idempo.lock-ttl", "idempo.max-response-size", "idempo.excluded-headers",
				"idempo.conflict.retry-after", "idempo.conflict.wait-timeout", "idempo.store-failure.mode",
				"idempo.store.type", "idempo.store.memory.max-entries", "idempo.store.memory.max-size",
				"idempo.max-request-size", "idempo.store.redis.key-prefix", "idempo.store.jdbc.table-name",
				"idempo.store.jdbc.lock-sessions", "idempo.store.jdbc.initialize-schema", "idempo.routes")) {
			assertThat(metadata).contains("\"name\": \"" + property + "\"");
		}
		assertThat(metadata).doesNotContain("\"description\": \"\"");
	}

	private static String resource(String path) throws Exception {
		try (InputStream in = new ClassPathResource(path).getInputStream()) {
			return StreamUtils.copyToString(in, StandardCharsets.UTF_8);
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		static final LockingStore STORE = new LockingStore() {

			@Override
			public ClaimResult claim(String key, Duration lockTtl) {
				return ClaimResult.InProgress.instance();
			}

			@Override
			public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
				return false;
			}

			@Override
			public boolean release(Lease lease) {
				return false;
			}

		};

		static final CallerScopeResolver SCOPE = (request) -> "tenant";

		@Bean
		LockingStore myStore() {
			return STORE;
		}

		@Bean
		CallerScopeResolver myScope() {
			return SCOPE;
		}

	}

	@RestController
	static class LongTtlController {

		@PostMapping("/long")
		@Idempotent(ttl = "${payments.ttl:36501d}")
		Map<String, String> bad() {
			return Map.of();
		}

	}

	@RestController
	static class PlaceholderTtlController {

		@PostMapping("/placeholder")
		@Idempotent(ttl = "${payments.ttl}")
		Map<String, String> placeholder() {
			return Map.of();
		}

	}

}
