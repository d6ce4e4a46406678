package dev.idempo.actuate;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.LockingStore;
import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.store.redis.RedisLockingStore;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.util.ClassUtils;

/**
 * The health of idempo's store, as the request flow reaches it: Redis answers a
 * {@code PING} on the store's connection factory; for PostgreSQL and MySQL/MariaDB the
 * database answers on a connection of the lock sessions' own data source (which Spring
 * Boot's {@code db} check, on the application's pool, does not see) and the record table
 * can be read; the details tell how many lock sessions are open. The memory store is
 * always up and tells its size. A custom store is reported up with its name only.
 *
 * @author idempo
 */
public class IdempotencyStoreHealthIndicator extends AbstractHealthIndicator {

	private static final boolean REDIS_PRESENT = ClassUtils.isPresent(
			"org.springframework.data.redis.connection.RedisConnectionFactory",
			IdempotencyStoreHealthIndicator.class.getClassLoader());

	private static final boolean JDBC_PRESENT = ClassUtils.isPresent("org.springframework.jdbc.core.JdbcTemplate",
			IdempotencyStoreHealthIndicator.class.getClassLoader());

	private final LockingStore store;

	/**
	 * Creates an indicator.
	 * @param store the store
	 */
	public IdempotencyStoreHealthIndicator(LockingStore store) {
		super("idempo store health check failed");
		this.store = store;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.withDetail("store", this.store.name());
		if (this.store instanceof InMemoryLockingStore memory) {
			builder.up().withDetail("entries", memory.size()).withDetail("bytes", memory.sizeInBytes());
			return;
		}
		if (REDIS_PRESENT && Redis.check(this.store)) {
			builder.up();
			return;
		}
		if (JDBC_PRESENT) {
			Map<String, Object> details = Jdbc.check(this.store);
			if (details != null) {
				builder.up().withDetails(details);
				return;
			}
		}
		builder.up();
	}

	/** Apart, so that Spring Data Redis is needed only when present. */
	private static final class Redis {

		static boolean check(LockingStore store) {
			if (store instanceof RedisLockingStore redis) {
				redis.ping();
				return true;
			}
			return false;
		}

	}

	/** Apart, so that Spring JDBC is needed only when present. */
	private static final class Jdbc {

		static @Nullable Map<String, Object> check(LockingStore store) {
			return (store instanceof JdbcLockingStore jdbc) ? jdbc.checkHealth() : null;
		}

	}

}
