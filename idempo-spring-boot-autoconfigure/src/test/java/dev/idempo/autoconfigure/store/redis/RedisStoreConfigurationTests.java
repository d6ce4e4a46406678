package dev.idempo.autoconfigure.store.redis;

import java.time.Clock;
import java.time.Duration;
import java.util.UUID;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.IdempotencyFailureAnalyzer;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.store.redis.ReactiveRedisLockingStore;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestRedis;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RedisStoreConfiguration}. Stores that the context creates are used
 * against the real test server, so a test proves which server a store talks to.
 *
 * @author idempo
 */
class RedisStoreConfigurationTests {

	private final String keyPrefix = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempo.store.redis.key-prefix=" + this.keyPrefix);

	@AfterEach
	void deleteKeys() {
		TestRedis.server().deleteKeys(this.keyPrefix);
	}

	@Test
	void redisStoreUsesTheApplicationsConnectionFactoryAndKeyPrefix() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.run((context) -> {
				assertThat(context).hasSingleBean(LockingStore.class)
					.getBean("idempotencyLockingStore")
					.isInstanceOf(RedisLockingStore.class);
				RedisLockingStore store = context.getBean(RedisLockingStore.class);
				String key = newKey();
				Lease lease = ((ClaimResult.Acquired) store.claim(key, Duration.ofSeconds(30))).lease();
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				assertThat(redis.opsForValue().get(this.keyPrefix + "{" + key + "}:lock")).isEqualTo(lease.token());
				assertThat(store.release(lease)).isTrue();
			});
	}

	@Test
	void defaultKeyPrefixIsTheStoresDefault() {
		assertThat(new IdempotencyRedisStoreProperties().getKeyPrefix())
			.isEqualTo(RedisLockingStore.DEFAULT_KEY_PREFIX);
	}

	@Test
	void memoryStoreStaysTheDefaultWithRedisOnTheClasspath() {
		this.contextRunner.run((context) -> assertThat(context).hasSingleBean(LockingStore.class)
			.getBean(LockingStore.class)
			.isInstanceOf(InMemoryLockingStore.class));
	}

	@Test
	void usersLockingStoreWins() {
		this.contextRunner.withPropertyValues("idempo.store.type=redis")
			.withUserConfiguration(UserLockingStoreConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(LockingStore.class)
				.getBean(LockingStore.class)
				.isSameAs(context.getBean(UserLockingStoreConfiguration.class).store));
	}

	@Test
	void dedicatedConnectionFactoryIsPreferredToTheApplicationsOwn() {
		// the application's own factory points at a port where nobody listens
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + TestRedis.freePort())
			.withUserConfiguration(DedicatedConnectionFactoryConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).getBean("redisConnectionFactory")
					.as("Spring Boot's own factory, kept beside the dedicated one")
					.isNotSameAs(context.getBean("idempotencyRedisConnectionFactory"));
				assertWorks(context.getBean(RedisLockingStore.class));
			});
	}

	@Test
	void dedicatedConnectionFactoryNeedsNoOther() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempo.store.type=redis", "idempo.store.redis.key-prefix=" + this.keyPrefix)
			.withUserConfiguration(DedicatedConnectionFactoryConfiguration.class)
			.run((context) -> assertWorks(context.getBean(RedisLockingStore.class)));
	}

	@Test
	void withoutSpringDataRedisStartupFailsNamingTheStarter() {
		// Jedis (a test dependency) hidden too, as Spring Boot would otherwise configure
		// it
		// beside Lettuce when it cannot see that there is a factory
		this.contextRunner
			.withClassLoader(new FilteredClassLoader(
					(name) -> name.equals(RedisConnectionFactory.class.getName()) || name.startsWith("redis.clients.")))
			.withPropertyValues("idempo.store.type=redis")
			.run((context) -> {
				FailureAnalysis analysis = failureAnalysis(context);
				assertThat(analysis.getDescription()).contains("'redis' store")
					.contains("Spring Data Redis")
					.contains("not on the classpath");
				assertThat(analysis.getAction()).contains("org.springframework.boot:spring-boot-starter-data-redis");
			});
	}

	@Test
	void withoutAConnectionFactoryStartupFailsNamingTheStarter() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempo.store.type=redis")
			.run((context) -> {
				FailureAnalysis analysis = failureAnalysis(context);
				assertThat(analysis.getDescription()).contains("'redis' store").contains("no RedisConnectionFactory");
				assertThat(analysis.getAction()).contains("org.springframework.boot:spring-boot-starter-data-redis")
					.contains("idempotencyRedisConnectionFactory");
			});
	}

	@Test
	void severalConnectionFactoriesWithoutAPrimaryFailStartup() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempo.store.type=redis")
			.withUserConfiguration(TwoConnectionFactoriesConfiguration.class)
			.run((context) -> {
				FailureAnalysis analysis = failureAnalysis(context);
				assertThat(analysis.getDescription()).contains("2 RedisConnectionFactory beans");
				assertThat(analysis.getAction()).contains("@Primary").contains("idempotencyRedisConnectionFactory");
			});
	}

	@Test
	void keyPrefixWithABraceFailsBinding() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url(),
					"idempo.store.redis.key-prefix=app{1}:")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(BindValidationException.class)
				.hasMessageContaining("idempo.store.redis.key-prefix")
				.hasMessageContaining("must not contain '{' or '}'"));
	}

	@Test
	void replicaAcknowledgementsAreOffByDefaultAndConfigurable() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.run((context) -> assertThat(context.getBean(RedisLockingStore.class).replicaAcknowledgements()).isZero());
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url(),
					"idempo.store.redis.replica-acknowledgements=1000",
					"idempo.store.redis.replica-acknowledgement-timeout=20ms")
			.run((context) -> {
				RedisLockingStore store = context.getBean(RedisLockingStore.class);
				assertThat(store.replicaAcknowledgements()).isEqualTo(1000);
				assertWorks(store);
				assertThat(store.unacknowledgedCompletes()).as("no test server has 1000 replicas").isEqualTo(1);
			});
	}

	@Test
	void negativeReplicaAcknowledgementsOrAZeroTimeoutFailBinding() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url(),
					"idempo.store.redis.replica-acknowledgements=-1")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(BindValidationException.class)
				.hasMessageContaining("idempo.store.redis.replica-acknowledgements"));
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url(),
					"idempo.store.redis.replica-acknowledgements=1",
					"idempo.store.redis.replica-acknowledgement-timeout=0s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(BindValidationException.class)
				.hasMessageContaining("idempo.store.redis.replica-acknowledgement-timeout"));
	}

	@Test
	void replicaAcknowledgementsWithRedisClusterFailStartup() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.cluster.nodes=127.0.0.1:7000",
					"idempo.store.redis.replica-acknowledgements=1")
			.run((context) -> {
				FailureAnalysis analysis = failureAnalysis(context);
				assertThat(analysis.getDescription()).contains("Redis Cluster");
				assertThat(analysis.getAction()).contains("idempo.store.redis.replica-acknowledgements");
			});
	}

	@Test
	void replicaAcknowledgementsWithAClientOtherThanLettuceFailStartup() {
		// only the start-up check meets this factory: it is never asked for a connection
		RedisConnectionFactory notLettuce = (RedisConnectionFactory) java.lang.reflect.Proxy.newProxyInstance(
				getClass().getClassLoader(), new Class<?>[] { RedisConnectionFactory.class }, (proxy, method, args) -> {
					return switch (method.getName()) {
						case "toString" -> "not Lettuce";
						case "hashCode" -> System.identityHashCode(proxy);
						case "equals" -> proxy == args[0];
						default -> throw new UnsupportedOperationException(method.getName());
					};
				});
		this.contextRunner
			.withBean(RedisStoreConfiguration.CONNECTION_FACTORY_BEAN_NAME, RedisConnectionFactory.class,
					() -> notLettuce)
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url(),
					"idempo.store.redis.replica-acknowledgements=1")
			.run((context) -> {
				FailureAnalysis analysis = failureAnalysis(context);
				assertThat(analysis.getDescription()).contains("only Lettuce guarantees");
				assertThat(analysis.getAction()).contains("idempo.store.redis.replica-acknowledgements");
			});
	}

	@Test
	void otherUnavailableStoresKeepTheirMessage() {
		this.contextRunner.withPropertyValues("idempo.store.type=postgres").run((context) -> {
			FailureAnalysis analysis = failureAnalysis(context);
			assertThat(analysis.getDescription()).contains("'postgres' store").doesNotContain("Redis");
		});
	}

	@Test
	void reactiveRedisStoreSharesTheBlockingStoresRecordsAndPrefix() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.run((context) -> {
				// served as the application's one ReactiveLockingStore
				ReactiveRedisLockingStore reactive = (ReactiveRedisLockingStore) context
					.getBean(ReactiveLockingStore.class);
				assertThat(context.getBean("idempotencyReactiveLockingStore")).isSameAs(reactive);
				assertThat(reactive.keyPrefix()).isEqualTo(this.keyPrefix);
				RedisLockingStore blocking = context.getBean(RedisLockingStore.class);
				assertThat(reactive.connectionFactory()).as("the blocking store's factory")
					.isSameAs(blocking.connectionFactory())
					.isSameAs(context.getBean("redisConnectionFactory"));
				String key = newKey();
				Lease lease = ((ClaimResult.Acquired) reactive.claim(key, Duration.ofSeconds(30))
					.block(Duration.ofSeconds(10))).lease();
				assertThat(blocking.claim(key, Duration.ofSeconds(30))).isInstanceOf(ClaimResult.InProgress.class);
				assertThat(reactive.release(lease).block(Duration.ofSeconds(10))).isTrue();
				assertThat(blocking.claim(key, Duration.ofSeconds(30))).isInstanceOf(ClaimResult.Acquired.class);
			});
	}

	@Test
	void reactiveStoreOfTheApplicationWins() {
		ReactiveLockingStore own = new InlineLockingStore(new InMemoryLockingStore(Clock.systemUTC(), 10, 1024));
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.withBean("ownReactiveStore", ReactiveLockingStore.class, () -> own)
			.run((context) -> assertThat(context).hasSingleBean(ReactiveLockingStore.class)
				.getBean(ReactiveLockingStore.class)
				.isSameAs(own));
	}

	@Test
	void noReactiveRedisStoreWithoutReactorOrForAnotherStore() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.withClassLoader(new FilteredClassLoader(Mono.class))
			.run((context) -> assertThat(context).hasSingleBean(RedisLockingStore.class)
				.doesNotHaveBean("idempotencyReactiveLockingStore"));
		this.contextRunner.withPropertyValues("spring.data.redis.url=" + TestRedis.server().url())
			.run((context) -> assertThat(context).hasSingleBean(InMemoryLockingStore.class)
				.doesNotHaveBean(ReactiveRedisLockingStore.class));
	}

	@Test
	void reactiveRedisStoreUsesTheDedicatedLettuceFactory() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.withUserConfiguration(DedicatedConnectionFactoryConfiguration.class)
			.run((context) -> assertThat(context.getBean(ReactiveRedisLockingStore.class).connectionFactory())
				.isSameAs(context.getBean(RedisStoreConfiguration.CONNECTION_FACTORY_BEAN_NAME))
				.isNotSameAs(context.getBean("redisConnectionFactory")));
	}

	@Test
	void noReactiveRedisStoreBesideTheApplicationsOwnLockingStore() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.withUserConfiguration(UserLockingStoreConfiguration.class)
			.run((context) -> assertNoReactiveStore(context));
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.withUserConfiguration(UserRedisLockingStoreConfiguration.class)
			.run((context) -> {
				assertThat(context).getBean(LockingStore.class).isInstanceOf(RedisLockingStore.class);
				assertNoReactiveStore(context);
			});
	}

	/**
	 * A Jedis factory is not reactive: there is no reactive Redis store, even though
	 * Spring Boot's own Lettuce factory is there (it may point at another server).
	 */
	@Test
	void noReactiveRedisStoreOverADedicatedJedisFactory() {
		this.contextRunner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.withUserConfiguration(DedicatedJedisConnectionFactoryConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RedisLockingStore.class).connectionFactory())
					.isInstanceOf(JedisConnectionFactory.class);
				assertThat(context.getBean("redisConnectionFactory"))
					.isInstanceOf(ReactiveRedisConnectionFactory.class);
				assertNoReactiveStore(context);
			});
	}

	/**
	 * No reactive Redis store: reactive callers get the application's store, served off
	 * their thread.
	 */
	private static void assertNoReactiveStore(AssertableWebApplicationContext context) {
		assertThat(context).hasNotFailed();
		assertThat(context.getBeanProvider(ReactiveRedisLockingStore.class).getIfAvailable()).isNull();
		assertThat(context.getBean(ReactiveLockingStore.class)).isNotInstanceOf(ReactiveRedisLockingStore.class);
	}

	private static FailureAnalysis failureAnalysis(AssertableWebApplicationContext context) {
		assertThat(context).hasFailed();
		FailureAnalysis analysis = new IdempotencyFailureAnalyzer().analyze(context.getStartupFailure());
		assertThat(analysis).as("failure analysis of %s", context.getStartupFailure()).isNotNull();
		return analysis;
	}

	private void assertWorks(RedisLockingStore store) {
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, Duration.ofSeconds(30))).lease();
		assertThat(store.complete(lease, new StoredRecord("fp", new byte[] { 1, 2, 3 }), Duration.ofSeconds(30)))
			.isTrue();
		assertThat(store.claim(key, Duration.ofSeconds(30))).isInstanceOf(ClaimResult.Completed.class);
	}

	private static String newKey() {
		return UUID.randomUUID().toString().replace("-", "");
	}

	@Configuration(proxyBeanMethods = false)
	static class UserLockingStoreConfiguration {

		final LockingStore store = new InMemoryLockingStore(Clock.systemUTC(), 10, 1024);

		@Bean
		LockingStore userLockingStore() {
			return this.store;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DedicatedConnectionFactoryConfiguration {

		@Bean(defaultCandidate = false)
		LettuceConnectionFactory idempotencyRedisConnectionFactory() {
			return TestRedis.server().unstartedConnectionFactory();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserRedisLockingStoreConfiguration {

		@Bean
		RedisLockingStore userLockingStore(RedisConnectionFactory connectionFactory) {
			return new RedisLockingStore(connectionFactory);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DedicatedJedisConnectionFactoryConfiguration {

		@Bean(defaultCandidate = false)
		JedisConnectionFactory idempotencyRedisConnectionFactory() {
			RedisURI uri = RedisURI.create(TestRedis.server().url());
			return new JedisConnectionFactory(new RedisStandaloneConfiguration(uri.getHost(), uri.getPort()));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoConnectionFactoriesConfiguration {

		@Bean
		LettuceConnectionFactory firstConnectionFactory() {
			return TestRedis.server().unstartedConnectionFactory();
		}

		@Bean
		LettuceConnectionFactory secondConnectionFactory() {
			return TestRedis.server().unstartedConnectionFactory();
		}

	}

}
