package dev.idempo.actuate;

import dev.idempo.store.LockingStore;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The health of idempo's store, as the request flow reaches it: each store checks itself
 * and contributes its own details ({@link LockingStore#checkHealth()}). Redis answers a
 * {@code PING} on the store's connection factory; for PostgreSQL and MySQL/MariaDB the
 * database answers on a connection of the lock sessions' own data source (which Spring
 * Boot's {@code db} check, on the application's pool, does not see) and the record table
 * can be read, and the details tell how many lock sessions are open. The memory store is
 * always up and tells its size. A custom store that does not check itself is reported up
 * with its name only.
 *
 * @author idempo
 */
public class IdempotencyStoreHealthIndicator extends AbstractHealthIndicator {

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
		builder.up().withDetails(this.store.checkHealth());
	}

}
