package dev.idempo.actuate;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;

import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.ObservedLockingStore;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.store.jdbc.JdbcStoreSettings;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.testsupport.TestRedis;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link IdempotencyStoreHealthIndicator} against every store on a real server, and
 * against servers that are not there.
 *
 * @author idempo
 */
class IdempotencyStoreHealthIndicatorTests {

	@Test
	void memoryStoreIsUpAndTellsItsSize() {
		InMemoryLockingStore store = new InMemoryLockingStore(Clock.systemUTC(), 100, 1024 * 1024);
		assertThat(store.claim("ab12", Duration.ofSeconds(30))).isInstanceOf(ClaimResult.Acquired.class);
		Health health = new IdempotencyStoreHealthIndicator(store).health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("store", "memory").containsKeys("entries", "bytes");
	}

	@Test
	void observedStoreTellsTheDetailsOfTheStoreItWraps() {
		InMemoryLockingStore memory = new InMemoryLockingStore(Clock.systemUTC(), 100, 1024 * 1024);
		LockingStore observed = new ObservedLockingStore(memory, new IdempotencyListener() {
		});
		Health health = new IdempotencyStoreHealthIndicator(observed).health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("store", "memory").containsEntry("entries", 0L);
	}

	@Test
	void customStoreContributesItsOwnDetailsAndIsDownWhenItsCheckThrows() {
		CustomStore store = new CustomStore();
		Health up = new IdempotencyStoreHealthIndicator(store).health();
		assertThat(up.getStatus()).isEqualTo(Status.UP);
		assertThat(up.getDetails()).containsEntry("store", "custom").containsEntry("shards", 3);
		store.reachable = false;
		Health down = new IdempotencyStoreHealthIndicator(store).health();
		assertThat(down.getStatus()).isEqualTo(Status.DOWN);
		assertThat(down.getDetails()).containsKey("error");
	}

	@Test
	void customStoreThatDoesNotCheckIsUpWithItsNameOnly() {
		LockingStore store = new CustomStore() {

			@Override
			public Map<String, Object> checkHealth() {
				return Map.of();
			}

		};
		Health health = new IdempotencyStoreHealthIndicator(store).health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsOnlyKeys("store");
	}

	@Test
	void redisStoreIsUpWhenRedisAnswersAndDownWhenItDoesNot() {
		LettuceConnectionFactory factory = TestRedis.server().createConnectionFactory();
		LettuceConnectionFactory nowhere = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", TestRedis.freePort()));
		nowhere.afterPropertiesSet();
		nowhere.start();
		try {
			assertThat(new IdempotencyStoreHealthIndicator(new RedisLockingStore(factory)).health().getStatus())
				.isEqualTo(Status.UP);
			Health down = new IdempotencyStoreHealthIndicator(new RedisLockingStore(nowhere)).health();
			assertThat(down.getStatus()).isEqualTo(Status.DOWN);
			assertThat(down.getDetails()).containsKey("error");
		}
		finally {
			factory.destroy();
			nowhere.destroy();
		}
	}

	@Test
	void postgresStoreIsUpWithItsLockSessionsAndDownWithoutItsDatabase() {
		TestDatabase database = TestDatabases.postgres();
		checkSqlStore(database, "postgresql", (dataSource, settings) -> JdbcLockingStore.postgres(dataSource, settings,
				JdbcLockingStore.DEFAULT_LOCK_NAMESPACE));
	}

	@Test
	void mysqlStoreIsUpWithItsLockSessionsAndDownWithoutItsDatabase() {
		TestDatabase database = TestDatabases.mysql();
		checkSqlStore(database, "mysql", (dataSource, settings) -> JdbcLockingStore.mysql(dataSource, settings,
				JdbcLockingStore.DEFAULT_LOCK_PREFIX));
	}

	private void checkSqlStore(TestDatabase database, String platform, StoreFactory factory) {
		String table = database.createTable(platform);
		Properties properties = new Properties();
		properties.setProperty("allowMultiQueries", "true");
		JdbcStoreSettings settings = JdbcStoreSettings.defaults().withTableName(table);
		JdbcLockingStore store = factory.create(database.dataSource(properties), settings);
		try {
			ClaimResult claim = store.claim("cd34", Duration.ofSeconds(30));
			assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
			Health up = new IdempotencyStoreHealthIndicator(store).health();
			assertThat(up.getStatus()).isEqualTo(Status.UP);
			assertThat(up.getDetails()).containsEntry("table", table)
				.containsEntry("openLockSessions", 1L)
				.containsKey("database");
			store.release(((ClaimResult.Acquired) claim).lease());
		}
		finally {
			store.close();
			database.dropTable(table);
		}
		String nowhere = database.url().replaceFirst("//[^/]+/", "//127.0.0.1:" + TestRedis.freePort() + "/");
		JdbcLockingStore unreachable = factory.create(new DriverManagerDataSource(nowhere),
				settings.withTimeout(Duration.ofSeconds(1)));
		try {
			Health down = new IdempotencyStoreHealthIndicator(unreachable).health();
			assertThat(down.getStatus()).isEqualTo(Status.DOWN);
			assertThat(down.getDetails()).containsKey("error");
		}
		finally {
			unreachable.close();
		}
	}

	@FunctionalInterface
	interface StoreFactory {

		JdbcLockingStore create(javax.sql.DataSource dataSource, JdbcStoreSettings settings);

	}

	/** A store of the application's own, which checks itself. */
	private static class CustomStore implements LockingStore {

		volatile boolean reachable = true;

		private final InMemoryLockingStore records = new InMemoryLockingStore(Clock.systemUTC(), 100, 1024 * 1024);

		@Override
		public ClaimResult claim(String key, Duration lockTtl) {
			return this.records.claim(key, lockTtl);
		}

		@Override
		public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
			return this.records.complete(lease, record, ttl);
		}

		@Override
		public boolean release(Lease lease) {
			return this.records.release(lease);
		}

		@Override
		public Map<String, Object> checkHealth() {
			if (!this.reachable) {
				throw new LockingStoreException("custom store unreachable");
			}
			return Map.of("shards", 3);
		}

		@Override
		public String name() {
			return "custom";
		}

	}

}
