package dev.idempo.autoconfigure;

import dev.idempo.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempo.store.LockingStore;
import dev.idempo.store.redis.RedisLockingStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Creates the {@link RedisLockingStore} when {@code idempo.store.type=redis}.
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
class RedisStoreConfiguration {

	/**
	 * Name of the bean that, if present, is the connection factory of the Redis store
	 * instead of the application's own.
	 */
	static final String CONNECTION_FACTORY_BEAN_NAME = "idempotencyRedisConnectionFactory";

	@Bean
	@ConditionalOnMissingBean(LockingStore.class)
	RedisLockingStore idempotencyLockingStore(IdempotencyProperties properties,
			@Qualifier(CONNECTION_FACTORY_BEAN_NAME) ObjectProvider<RedisConnectionFactory> dedicatedConnectionFactory,
			ObjectProvider<RedisConnectionFactory> connectionFactories) {
		String keyPrefix = properties.getStore().getRedis().getKeyPrefix();
		if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
			throw new IdempotencyStoreUnavailableException(StoreType.REDIS,
					"idempo.store.redis.key-prefix '" + keyPrefix
							+ "' contains '{' or '}', which would replace the hash tag of every key.",
					"Set idempo.store.redis.key-prefix to a prefix without braces, such as 'idempo:'.");
		}
		RedisConnectionFactory connectionFactory = dedicatedConnectionFactory
			.getIfAvailable(connectionFactories::getIfUnique);
		if (connectionFactory == null) {
			throw noConnectionFactory(connectionFactories.stream().count());
		}
		return new RedisLockingStore(connectionFactory, keyPrefix);
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
