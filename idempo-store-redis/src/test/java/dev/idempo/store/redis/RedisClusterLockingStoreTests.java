package dev.idempo.store.redis;

import java.util.List;

import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.testsupport.TestRedisCluster;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store against a real three-master Redis Cluster that this class starts on
 * loopback ports and stops afterwards. If the cluster cannot start, every test fails with
 * the reason.
 *
 * @author idempo
 */
class RedisClusterLockingStoreTests extends AbstractRedisLockingStoreTests {

	private static @Nullable TestRedisCluster cluster;

	private static @Nullable LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startCluster() {
		cluster = TestRedisCluster.start(3);
		System.out.println(
				"[idempo tests] Redis Cluster: " + cluster.nodeAddresses() + " running " + cluster.executablePath());
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

	@Override
	protected RedisConnectionFactory connectionFactory() {
		assertThat(connectionFactory).as("cluster connection factory").isNotNull();
		return connectionFactory;
	}

	private static TestRedisCluster cluster() {
		assertThat(cluster).as("cluster").isNotNull();
		return cluster;
	}

	@Test
	void storeTalksToTheWholeCluster() {
		try (RedisConnection connection = connectionFactory().getConnection()) {
			assertThat(connection).isInstanceOf(RedisClusterConnection.class);
			assertThat(((RedisClusterConnection) connection).clusterGetNodes()).hasSize(3)
				.allSatisfy((node) -> assertThat(node.isMaster()).isTrue());
		}
	}

	@Test
	void keysSpreadOverEveryMasterAndEachRecordStaysOnOne() {
		List<RedisCommands<String, String>> nodes = cluster().nodeCommands();
		int[] recordsPerNode = new int[nodes.size()];
		for (int i = 0; i < 60; i++) {
			String key = newKey();
			String lockKey = redisStore().lockKey(key);
			String recordKey = redisStore().recordKey(key);
			Lease lease = acquire(key);
			int holderIndex = holderOf(SlotHash.getSlot(lockKey), nodes);
			RedisCommands<String, String> holder = nodes.get(holderIndex);
			assertThat(holder.exists(lockKey)).as("lock on its slot's node").isOne();
			assertThat(store().complete(lease, record("spread"), TTL)).isTrue();
			assertThat(holder.exists(recordKey)).as("record on the same node").isOne();
			assertThat(holder.exists(lockKey)).as("lock deleted").isZero();
			recordsPerNode[holderIndex]++;
		}
		assertThat(recordsPerNode).as("records per master").doesNotContain(0);
	}

	/**
	 * The one node that holds keys in {@code slot}: each node counts only its own keys,
	 * and answers other keys' commands with MOVED.
	 */
	private static int holderOf(int slot, List<RedisCommands<String, String>> nodes) {
		int holder = -1;
		for (int node = 0; node < nodes.size(); node++) {
			if (nodes.get(node).clusterCountKeysInSlot(slot) > 0) {
				assertThat(holder).as("another node also holds keys in slot %d", slot).isEqualTo(-1);
				holder = node;
			}
		}
		assertThat(holder).as("node holding keys in slot %d", slot).isNotNegative();
		return holder;
	}

	@Test
	void scriptsAreSentAgainAfterEveryNodeForgetsThem() {
		String key = newKey();
		Lease lease = acquire(key);
		cluster().nodeCommands().forEach(RedisCommands::scriptFlush);
		assertThat(store().renew(lease, LOCK_TTL)).isTrue();
		assertThat(store().complete(lease, record("after flush"), TTL)).isTrue();
		cluster().nodeCommands().forEach(RedisCommands::scriptFlush);
		assertThat(store().claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
	}

}
