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
class RedisClusterLockingStoreTest extends AbstractRedisLockingStoreTest {

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
			int slot = SlotHash.getSlot(redisStore().lockKey(key));
			Lease lease = acquire(key);
			int lockHolder = holderOfTheOnlyKeyIn(slot, nodes);
			assertThat(store().complete(lease, record("spread"), TTL)).isTrue();
			int recordHolder = holderOfTheOnlyKeyIn(slot, nodes);
			assertThat(recordHolder).as("node of the record of key %s", key).isEqualTo(lockHolder);
			recordsPerNode[recordHolder]++;
		}
		assertThat(recordsPerNode).as("records per master").doesNotContain(0);
	}

	private static int holderOfTheOnlyKeyIn(int slot, List<RedisCommands<String, String>> nodes) {
		int holder = -1;
		for (int node = 0; node < nodes.size(); node++) {
			// each node counts only the keys it holds itself
			long keys = nodes.get(node).clusterCountKeysInSlot(slot);
			if (keys > 0) {
				assertThat(holder).as("another node also holds slot %d", slot).isEqualTo(-1);
				assertThat(keys).as("keys in slot %d", slot).isOne();
				holder = node;
			}
		}
		assertThat(holder).as("node holding slot %d", slot).isNotNegative();
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
