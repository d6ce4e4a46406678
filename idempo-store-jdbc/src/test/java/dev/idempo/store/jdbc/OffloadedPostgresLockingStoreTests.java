package dev.idempo.store.jdbc;

/**
 * The reactive store contract for the PostgreSQL store served through
 * {@link dev.idempo.store.OffloadedLockingStore}.
 *
 * @author idempo
 */
class OffloadedPostgresLockingStoreTests extends OffloadedJdbcLockingStoreTests {

	@Override
	JdbcLockingStoreTests serverTests() {
		return new PostgresLockingStoreTests();
	}

}
