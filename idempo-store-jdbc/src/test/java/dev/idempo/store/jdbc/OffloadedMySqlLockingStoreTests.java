package dev.idempo.store.jdbc;

/**
 * The reactive store contract for the MySQL/MariaDB store served through
 * {@link dev.idempo.store.OffloadedLockingStore}, on MariaDB.
 *
 * @author idempo
 */
class OffloadedMySqlLockingStoreTests extends OffloadedJdbcLockingStoreTests {

	@Override
	JdbcLockingStoreTests serverTests() {
		return new MySqlLockingStoreTests();
	}

}
