package dev.idempo.web.hostile;

import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestRedis;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile keys and bodies on the Redis store, against the server {@link TestRedis}
 * resolves, under a random key prefix in a database of its own; records and claims are
 * counted with {@code SCAN} on that prefix, which reads that database's keyspace only (a
 * shared server may hold hundreds of thousands of other keys in its default database: a
 * benchmark's, another test's).
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=redis")
class RedisHostileInputHttpTests extends HostileInputHttpTests {

	private static final TestRedis.Server SERVER = TestRedis.server().inDatabase(11);

	private static final String KEY_PREFIX = "idempo-hostile:" + UUID.randomUUID().toString().replace("-", "") + ":";

	@Autowired
	RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", SERVER::url);
		registry.add("idempo.store.redis.key-prefix", () -> KEY_PREFIX);
	}

	@AfterAll
	static void deleteKeys() {
		SERVER.deleteKeys(KEY_PREFIX);
	}

	@Override
	protected long storedRecords() {
		return count(KEY_PREFIX + "*:record");
	}

	@Override
	protected long heldClaims() {
		return count(KEY_PREFIX + "*:lock");
	}

	private long count(String pattern) {
		long count = 0;
		try (RedisConnection connection = this.connectionFactory.getConnection();
				Cursor<byte[]> cursor = connection.keyCommands()
					.scan(ScanOptions.scanOptions().match(pattern).count(1000).build())) {
			while (cursor.hasNext()) {
				cursor.next();
				count++;
			}
		}
		return count;
	}

	@Test
	void runsOnTheRedisStore() {
		assertThat(this.store).isInstanceOf(RedisLockingStore.class);
	}

}
