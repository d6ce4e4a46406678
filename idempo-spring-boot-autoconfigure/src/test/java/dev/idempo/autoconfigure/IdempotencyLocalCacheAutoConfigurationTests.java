package dev.idempo.autoconfigure;

import org.junit.jupiter.api.Test;

import dev.idempo.core.LocallyCachedLockingStore;
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

	@Test
	void enabledWithoutCaffeineFailsNamingTheDependency() {
		this.runner.withPropertyValues("idempo.local-cache.enabled=true")
			.withClassLoader(new FilteredClassLoader("com.github.benmanes.caffeine"))
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("com.github.ben-manes.caffeine:caffeine"));
	}

}
