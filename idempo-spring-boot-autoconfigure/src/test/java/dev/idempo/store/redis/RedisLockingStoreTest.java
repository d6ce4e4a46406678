package dev.idempo.store.redis;

import java.time.Duration;
import java.util.UUID;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.testsupport.TestRedis;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The Redis store against a standalone server, as {@link TestRedis} resolves it: the
 * configured one, the local one, or an embedded one.
 *
 * @author idempo
 */
class RedisLockingStoreTest extends AbstractRedisLockingStoreTest {

	private static @Nullable LettuceConnectionFactory connectionFactory;

	@Override
	protected RedisConnectionFactory connectionFactory() {
		return sharedConnectionFactory();
	}

	private static synchronized RedisConnectionFactory sharedConnectionFactory() {
		if (connectionFactory == null) {
			connectionFactory = TestRedis.server().createConnectionFactory();
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

	/**
	 * Deletes what the test wrote: the server may be shared, and records live an hour.
	 */
	@Override
	protected void destroyStore(LockingStore store) {
		try (RedisConnection connection = connectionFactory().getConnection()) {
			TestRedis.Server.deleteKeys(connection, keyPrefix());
		}
	}

	@Test
	void unreachableRedisIsALockingStoreException() {
		LettuceConnectionFactory unreachable = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", TestRedis.freePort()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		unreachable.afterPropertiesSet();
		unreachable.start();
		try {
			RedisLockingStore store = new RedisLockingStore(unreachable, keyPrefix());
			Lease lease = new Lease(newKey(), UUID.randomUUID().toString());
			assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> store.claim(newKey(), LOCK_TTL))
				.withMessageContaining("claim");
			assertThatExceptionOfType(LockingStoreException.class)
				.isThrownBy(() -> store.complete(lease, record("x"), TTL));
			assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> store.release(lease));
			assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> store.renew(lease, LOCK_TTL));
		}
		finally {
			unreachable.destroy();
		}
	}

}
