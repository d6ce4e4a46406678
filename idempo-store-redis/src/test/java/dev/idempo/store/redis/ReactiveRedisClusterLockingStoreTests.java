package dev.idempo.store.redis;

import java.util.UUID;

import io.lettuce.core.api.sync.RedisCommands;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.ReactiveLockingStoreContractTest;
import dev.idempo.testsupport.TestRedisCluster;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive store contract for {@link ReactiveRedisLockingStore} against a real
 * three-master Redis Cluster that this class starts and stops: every record's keys live
 * in one slot, and the scripts reach the node that owns it.
 *
 * @author idempo
 */
class ReactiveRedisClusterLockingStoreTests extends ReactiveLockingStoreContractTest {

	private static @Nullable TestRedisCluster cluster;

	private static @Nullable LettuceConnectionFactory connectionFactory;

	private final String keyPrefix = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	@BeforeAll
	static void startCluster() {
		cluster = TestRedisCluster.start(3);
		connectionFactory = cluster.createConnectionFactory();
	}

	@AfterAll
	static void stopCluster() {
		try {
			if (connectionFactory != null) {
				connectionFactory.destroy();
			}
		}
		finally {
			connectionFactory = null;
			if (cluster != null) {
				cluster.close();
				cluster = null;
			}
		}
	}

	private static LettuceConnectionFactory connectionFactory() {
		assertThat(connectionFactory).as("cluster connection factory").isNotNull();
		return connectionFactory;
	}

	@Override
	protected LockingStore createBlockingStore() {
		return new RedisLockingStore(connectionFactory(), this.keyPrefix);
	}

	@Override
	protected ReactiveLockingStore createReactiveStore(LockingStore blockingStore) {
		return new ReactiveRedisLockingStore(connectionFactory(), this.keyPrefix);
	}

	@Override
	protected void destroyBlockingStore(LockingStore store) {
		((ReactiveRedisLockingStore) reactiveStore()).close();
	}

	@Override
	protected void breakLease(Lease lease) {
		try (RedisConnection connection = connectionFactory().getConnection()) {
			String lockKey = ((RedisLockingStore) blockingStore()).lockKey(lease.key());
			assertThat(connection.keyCommands().del(lockKey.getBytes())).isOne();
		}
	}

	@Test
	void scriptsAreSentAgainAfterEveryNodeForgetsThem() {
		assertThat(cluster).isNotNull();
		String key = newKey();
		Lease lease = acquire(key);
		cluster.nodeCommands().forEach(RedisCommands::scriptFlush);
		assertThat(store().renew(lease, LOCK_TTL)).isTrue();
		assertThat(store().complete(lease, record("after flush"), TTL)).isTrue();
		cluster.nodeCommands().forEach(RedisCommands::scriptFlush);
		assertThat(store().claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
		assertThat(blockingStore().claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
	}

}
