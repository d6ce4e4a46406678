package dev.idempo.autoconfigure.store.redis;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.autoconfigure.IdempotencyStoreStartupCheck;
import dev.idempo.autoconfigure.IdempotencyStoreUnavailableException;
import dev.idempo.store.LockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.redis.ReactiveRedisLockingStore;
import dev.idempo.store.redis.RedisLockingStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Creates the {@link RedisLockingStore} when {@code idempo.store.type=redis}, and, when
 * Reactor is on the class path and that store's connection factory is a
 * {@link ReactiveRedisConnectionFactory}, the {@link ReactiveRedisLockingStore} over the
 * same factory with the same key prefix for reactive applications.
 * <p>
 * The store talks to Redis through the {@link RedisConnectionFactory} bean named
 * {@value #CONNECTION_FACTORY_BEAN_NAME} if there is one, else through the application's
 * own (the one Spring Boot auto-configures from {@code spring.data.redis.*}, or the
 * unique or primary one the application declares). Declare the dedicated factory with
 * {@code @Bean(defaultCandidate = false)} so that Spring Boot keeps auto-configuring the
 * application's own factory beside it.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnProperty(name = "idempo.store.type", havingValue = "redis")
public final class RedisStoreConfiguration {

	/**
	 * Name of the bean that, if present, is the connection factory of the Redis store
	 * instead of the application's own.
	 */
	static final String CONNECTION_FACTORY_BEAN_NAME = "idempotencyRedisConnectionFactory";

	/** Name of idempo's own Redis store bean. */
	static final String LOCKING_STORE_BEAN_NAME = "idempotencyLockingStore";

	/**
	 * The Redis store's reactive counterpart, when there is one: not a candidate for
	 * injection by type; {@code ReactiveStoreConfiguration} serves it as the
	 * application's {@code ReactiveLockingStore}.
	 */
	public static final String REACTIVE_STORE_BEAN_NAME = "idempotencyReactiveRedisLockingStore";

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisStoreConfiguration.class.getClassLoader());

	@Bean(LOCKING_STORE_BEAN_NAME)
	@ConditionalOnMissingBean(LockingStore.class)
	RedisLockingStore idempotencyLockingStore(IdempotencyRedisStoreProperties redis,
			@Qualifier(CONNECTION_FACTORY_BEAN_NAME) ObjectProvider<RedisConnectionFactory> dedicatedConnectionFactory,
			ObjectProvider<RedisConnectionFactory> connectionFactories) {
		RedisConnectionFactory connectionFactory = dedicatedConnectionFactory
			.getIfAvailable(connectionFactories::getIfUnique);
		if (connectionFactory == null) {
			throw noConnectionFactory(connectionFactories.stream().count());
		}
		checkReplicaAcknowledgements(redis, connectionFactory);
		return new RedisLockingStore(connectionFactory, redis.getKeyPrefix())
			.withReplicaAcknowledgements(redis.getReplicaAcknowledgements(), redis.getReplicaAcknowledgementTimeout());
	}

	/**
	 * The non-blocking Redis store for reactive applications, only beside idempo's own
	 * {@link RedisLockingStore} and only when that store's connection factory is itself
	 * reactive (Lettuce's is): then it talks to the same server with the same key prefix,
	 * so both share their records. Otherwise (the application's own store, a Jedis
	 * factory) there is none, and reactive callers run the application's store off their
	 * thread; no other factory is ever used. Completes through it do not wait for
	 * replicas.
	 * <p>
	 * This nested configuration is processed before the outer class's bean methods, so
	 * the decision is taken in the bean method, from the store itself: without a suitable
	 * store the method returns {@code null}, and {@code ReactiveStoreConfiguration}
	 * serves the blocking store off the caller's thread instead.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "reactor.core.publisher.Mono",
			"org.springframework.data.redis.connection.ReactiveRedisConnectionFactory" })
	static class ReactiveRedisStoreConfiguration {

		private static final Log logger = LogFactory.getLog(ReactiveRedisStoreConfiguration.class);

		@Bean(name = REACTIVE_STORE_BEAN_NAME, destroyMethod = "close", defaultCandidate = false)
		@ConditionalOnMissingBean(ReactiveLockingStore.class)
		@Nullable ReactiveRedisLockingStore idempotencyReactiveRedisLockingStore(IdempotencyRedisStoreProperties redis,
				@Qualifier(LOCKING_STORE_BEAN_NAME) ObjectProvider<LockingStore> store) {
			if (!(store.getIfAvailable() instanceof RedisLockingStore blocking)
					|| !(blocking.connectionFactory() instanceof ReactiveRedisConnectionFactory connectionFactory)) {
				return null;
			}
			if (redis.getReplicaAcknowledgements() > 0) {
				logger.warn("idempo.store.redis.replica-acknowledgements=" + redis.getReplicaAcknowledgements()
						+ " applies to the blocking Redis store only: completes through the reactive store (WebFlux, "
						+ "reactive methods) do not WAIT for replicas");
			}
			return new ReactiveRedisLockingStore(connectionFactory, blocking.keyPrefix());
		}

	}

	@Bean
	IdempotencyStoreStartupCheck idempotencyStoreStartupCheck(ObjectProvider<RedisLockingStore> store,
			IdempotencyProperties properties,
			@Qualifier(CONNECTION_FACTORY_BEAN_NAME) ObjectProvider<RedisConnectionFactory> dedicatedConnectionFactory,
			ObjectProvider<RedisConnectionFactory> connectionFactories) {
		RedisConnectionFactory connectionFactory = dedicatedConnectionFactory
			.getIfAvailable(connectionFactories::getIfUnique);
		return new IdempotencyStoreStartupCheck(store.getIfAvailable(), "redis", address(connectionFactory),
				properties.getStoreFailure().getMode() == IdempotencyProperties.StoreFailureMode.FAIL_OPEN);
	}

	/** Where Redis is, as far as the connection factory tells, without credentials. */
	static String address(@Nullable RedisConnectionFactory connectionFactory) {
		if (connectionFactory == null) {
			return "(no connection factory)";
		}
		return (LETTUCE_PRESENT && Lettuce.isLettuce(connectionFactory)) ? Lettuce.address(connectionFactory)
				: connectionFactory.getClass().getSimpleName();
	}

	private static void checkReplicaAcknowledgements(IdempotencyRedisStoreProperties redis,
			RedisConnectionFactory connectionFactory) {
		// the values themselves are checked when bound (IdempotencyRedisStoreProperties)
		int replicas = redis.getReplicaAcknowledgements();
		if (replicas > 0 && !(LETTUCE_PRESENT && Lettuce.isLettuce(connectionFactory))) {
			throw new IdempotencyStoreUnavailableException(StoreType.REDIS,
					"idempo.store.redis.replica-acknowledgements is " + replicas
							+ ", but the Redis connection factory is " + connectionFactory.getClass().getSimpleName()
							+ ": WAIT must follow the write on the same connection, which only Lettuce guarantees.",
					"Set idempo.store.redis.replica-acknowledgements to 0, or use Lettuce (Spring Boot's default "
							+ "Redis client).");
		}
		if (replicas > 0 && LETTUCE_PRESENT && Lettuce.isCluster(connectionFactory)) {
			throw new IdempotencyStoreUnavailableException(StoreType.REDIS,
					"idempo.store.redis.replica-acknowledgements is " + replicas
							+ ", but the Redis connection factory is for Redis Cluster, where it is not supported.",
					"Set idempo.store.redis.replica-acknowledgements to 0, or use a standalone or Sentinel Redis.");
		}
	}

	/** Apart, so that Lettuce is needed only when it is the client. */
	private static final class Lettuce {

		static boolean isLettuce(RedisConnectionFactory connectionFactory) {
			return connectionFactory instanceof LettuceConnectionFactory;
		}

		static boolean isCluster(RedisConnectionFactory connectionFactory) {
			return connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
		}

		static String address(RedisConnectionFactory connectionFactory) {
			LettuceConnectionFactory lettuce = (LettuceConnectionFactory) connectionFactory;
			if (lettuce.isClusterAware() && lettuce.getClusterConfiguration() != null) {
				return "cluster " + lettuce.getClusterConfiguration().getClusterNodes();
			}
			if (lettuce.isRedisSentinelAware() && lettuce.getSentinelConfiguration() != null) {
				RedisSentinelConfiguration sentinel = lettuce.getSentinelConfiguration();
				return "master " + sentinel.getMaster() + " of sentinels " + sentinel.getSentinels() + ", database "
						+ lettuce.getDatabase();
			}
			return lettuce.getHostName() + ":" + lettuce.getPort() + ", database " + lettuce.getDatabase();
		}

	}

	private static IdempotencyStoreUnavailableException noConnectionFactory(long candidates) {
		if (candidates > 1) {
			return new IdempotencyStoreUnavailableException(StoreType.REDIS,
					"there are " + candidates + " RedisConnectionFactory beans and none is primary.",
					"Mark one RedisConnectionFactory bean @Primary, or declare the one idempo should use as a bean named '"
							+ CONNECTION_FACTORY_BEAN_NAME + "'.");
		}
		return new IdempotencyStoreUnavailableException(StoreType.REDIS, "there is no RedisConnectionFactory bean.",
				"Add org.springframework.boot:spring-boot-starter-data-redis and configure spring.data.redis.*, "
						+ "or declare a RedisConnectionFactory bean (named '" + CONNECTION_FACTORY_BEAN_NAME
						+ "' to dedicate it to idempo).");
	}

}
