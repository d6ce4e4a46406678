package dev.idempo.store.jdbc;

import javax.sql.DataSource;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * The batching and the plain store give the same outcomes on PostgreSQL.
 *
 * @author idempo
 */
class PostgresSchedulerDifferentialTests extends SchedulerDifferentialTests {

	@Override
	TestDatabase database() {
		return TestDatabases.postgres();
	}

	@Override
	String platform() {
		return "postgresql";
	}

	@Override
	DataSource dataSource() {
		return database().dataSource();
	}

	@Override
	JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings) {
		return JdbcLockingStore.postgres(dataSource, settings, JdbcLockingStore.DEFAULT_LOCK_NAMESPACE);
	}

}
