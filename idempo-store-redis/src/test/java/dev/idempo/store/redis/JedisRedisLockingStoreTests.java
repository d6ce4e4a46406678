package dev.idempo.store.redis;

import java.time.Duration;

import io.lettuce.core.RedisURI;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.LockingStore;
import dev.idempo.testsupport.TestRedis;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store through Jedis, which Spring Data Redis supports as its other client
 * ({@code spring.data.redis.client-type=jedis}): the same scripts and records as through
 * Lettuce, each call completing on the calling thread. Against the server
 * {@link TestRedis} resolves.
 *
 * @author idempo
 */
class JedisRedisLockingStoreTests extends AbstractRedisLockingStoreTests {

	private static @Nullable JedisConnectionFactory connectionFactory;

	@Override
	protected RedisConnectionFactory connectionFactory() {
		return sharedConnectionFactory();
	}

	private static synchronized RedisConnectionFactory sharedConnectionFactory() {
		if (connectionFactory == null) {
			RedisURI uri = RedisURI.create(TestRedis.server().url());
			// host, port, database and password as the Lettuce tests read them from the
			// URL
			RedisStandaloneConfiguration standalone = (RedisStandaloneConfiguration) LettuceConnectionFactory
				.createRedisConfiguration(uri);
			JedisClientConfiguration.JedisClientConfigurationBuilder client = JedisClientConfiguration.builder()
				.readTimeout(Duration.ofSeconds(10));
			if (uri.isSsl()) {
				client.useSsl();
			}
			connectionFactory = new JedisConnectionFactory(standalone, client.usePooling().build());
			connectionFactory.afterPropertiesSet();
			connectionFactory.start();
		}
		return connectionFactory;
	}

	@AfterAll
	static synchronized void destroyConnectionFactory() {
		if (connectionFactory != null) {
			connectionFactory.destroy();
			connectionFactory = null;
		}
	}

	@Override
	protected void destroyStore(LockingStore store) {
		try (RedisConnection connection = connectionFactory().getConnection()) {
			TestRedis.Server.deleteKeys(connection, keyPrefix());
		}
	}

	@Test
	void runsThroughJedis() {
		try (RedisConnection connection = connectionFactory().getConnection()) {
			assertThat(connection.getClass().getName()).contains("Jedis");
		}
	}

}
