package dev.idempo.store.redis;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisURI;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.testsupport.TestRedis;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The Redis store against a standalone server, as {@link TestRedis} resolves it: the
 * configured one, the local one, or an embedded one.
 *
 * @author idempo
 */
class RedisLockingStoreTests extends AbstractRedisLockingStoreTests {

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
	void anEvictionIsAnnouncedToEveryStoreWithTheSamePrefix() throws Exception {
		RedisLockingStore other = new RedisLockingStore(connectionFactory(), keyPrefix());
		BlockingQueue<String> evicted = new LinkedBlockingQueue<>();
		try (AutoCloseable subscription = other.subscribeToEvictions(evicted::add)) {
			String key = newKey();
			store().complete(acquire(key), record("stored"), TTL);
			assertThat(store().evict(key)).isTrue();
			assertThat(evicted.poll(10, TimeUnit.SECONDS)).isEqualTo(key);
		}
		assertThat(other.evictionChannel()).isEqualTo(keyPrefix() + "evictions");
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

	/**
	 * More replicas than the test server has: {@code WAIT} answers fewer after its
	 * timeout, the record is stored all the same and the complete is counted as
	 * unacknowledged; a lost lease writes and counts nothing.
	 */
	@Test
	void completeThatTooFewReplicasAcknowledgeIsStoredAndCounted() {
		RedisLockingStore waiting = redisStore().withReplicaAcknowledgements(1000, Duration.ofMillis(50));
		assertThat(waiting.replicaAcknowledgements()).isEqualTo(1000);
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) waiting.claim(key, LOCK_TTL)).lease();
		assertThat(waiting.complete(lease, record("waited"), TTL)).isTrue();
		assertThat(waiting.unacknowledgedCompletes()).isEqualTo(1);
		assertThat(waiting.acknowledgedCompletes()).isZero();
		assertThat(((ClaimResult.Completed) store().claim(key, LOCK_TTL)).record()).isEqualTo(record("waited"));
		assertThat(waiting.complete(lease, record("late"), TTL)).isFalse();
		assertThat(waiting.unacknowledgedCompletes()).isEqualTo(1);
		assertThat(redisStore().withReplicaAcknowledgements(0, Duration.ofSeconds(1)).replicaAcknowledgements())
			.isZero();
	}

	/**
	 * A {@code WAIT} that outlives the client's command timeout fails on the client; the
	 * record is stored all the same, so the complete succeeds and is counted as
	 * unacknowledged, never as a store failure (which would tell the caller that a retry
	 * runs the handler again).
	 */
	@Test
	void waitThatTimesOutOnTheClientStillReportsTheStoredRecord() {
		RedisURI uri = RedisURI.create(TestRedis.server().url());
		LettuceClientConfiguration.LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder()
			.commandTimeout(Duration.ofMillis(300));
		if (uri.isSsl()) {
			client.useSsl();
		}
		LettuceConnectionFactory impatient = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(uri), client.build());
		impatient.afterPropertiesSet();
		impatient.start();
		try {
			RedisLockingStore waiting = new RedisLockingStore(impatient, keyPrefix()).withReplicaAcknowledgements(1000,
					Duration.ofSeconds(2));
			String key = newKey();
			Lease lease = ((ClaimResult.Acquired) waiting.claim(key, LOCK_TTL)).lease();
			assertThat(waiting.complete(lease, record("stored"), TTL)).isTrue();
			assertThat(waiting.unacknowledgedCompletes()).isEqualTo(1);
			assertThat(((ClaimResult.Completed) store().claim(key, LOCK_TTL)).record()).isEqualTo(record("stored"));
		}
		finally {
			impatient.destroy();
		}
	}

}
