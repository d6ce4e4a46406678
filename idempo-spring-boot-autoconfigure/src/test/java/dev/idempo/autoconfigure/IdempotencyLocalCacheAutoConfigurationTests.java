package dev.idempo.autoconfigure;

import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import dev.idempo.IdempotencyTemplate;
import dev.idempo.autoconfigure.metrics.IdempotencyMetricsAutoConfiguration;
import dev.idempo.store.LocallyCachedLockingStore;
import dev.idempo.store.LockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempo.local-cache.*}: off by default (the configured store is the store), and
 * when enabled the primary {@link LockingStore} in front of whichever store is
 * configured, whose own bean stays what it was.
 *
 * @author idempo
 */
class IdempotencyLocalCacheAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class));

	@Test
	void offByDefault() {
		this.runner.run((context) -> {
			assertThat(context).doesNotHaveBean(LocallyCachedLockingStore.class);
			assertThat(context.getBean(LockingStore.class)).isInstanceOf(InMemoryLockingStore.class);
		});
	}

	@Test
	void whenEnabledTheCacheIsTheStoreEveryoneGetsInFrontOfTheConfiguredOne() {
		this.runner.withPropertyValues("idempo.local-cache.enabled=true").run((context) -> {
			LockingStore store = context.getBean(LockingStore.class);
			assertThat(store).isInstanceOf(LocallyCachedLockingStore.class);
			assertThat(((LocallyCachedLockingStore) store).delegate())
				.isSameAs(context.getBean(InMemoryLockingStore.class));
		});
	}

	/**
	 * The template (and so the method flow under it) goes through the cache without code
	 * of its own: with the record gone from the store behind the cache's back, the second
	 * call still replays, and the hit is counted.
	 */
	@Test
	void templateCallsReplayFromTheCacheAndHitsAreCounted() {
		this.runner.withConfiguration(AutoConfigurations.of(
				org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
				org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class,
				IdempotencyMetricsAutoConfiguration.class))
			.withPropertyValues("idempo.local-cache.enabled=true")
			.run((context) -> {
				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				AtomicInteger runs = new AtomicInteger();
				assertThat(template.execute("job", "k1", Integer.class, runs::incrementAndGet)).isOne();
				InMemoryLockingStore shared = context.getBean(InMemoryLockingStore.class);
				assertThat(shared.size()).isOne();
				shared.clear();
				assertThat(template.execute("job", "k1", Integer.class, runs::incrementAndGet)).isOne();
				assertThat(runs).hasValue(1);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				assertThat(registry.get("idempo.local-cache.claims").tag("result", "hit").functionCounter().count())
					.isOne();
				assertThat(registry.get("idempo.local-cache.claims").tag("result", "miss").functionCounter().count())
					.isOne();
			});
	}

	@Test
	void enabledWithoutCaffeineFailsNamingTheDependency() {
		this.runner.withPropertyValues("idempo.local-cache.enabled=true")
			.withClassLoader(new FilteredClassLoader("com.github.benmanes.caffeine"))
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("com.github.ben-manes.caffeine:caffeine"));
	}

}
