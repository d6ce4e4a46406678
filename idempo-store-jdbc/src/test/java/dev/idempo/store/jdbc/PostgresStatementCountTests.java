package dev.idempo.store.jdbc;

import javax.sql.DataSource;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * {@link StatementCountTests} on PostgreSQL, whose statements take arrays: a batch costs
 * what one operation costs.
 *
 * @author idempo
 */
class PostgresStatementCountTests extends StatementCountTests {

	@Override
	TestDatabase database() {
		return TestDatabases.postgres();
	}

	@Override
	String platform() {
		return "postgresql";
	}

	@Override
	DataSource dataSource(TestDatabase database) {
		return database.dataSource();
	}

	@Override
	JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings) {
		return JdbcLockingStore.postgres(dataSource, settings, JdbcLockingStore.DEFAULT_LOCK_NAMESPACE);
	}

	@Override
	Cost freshKey() {
		// claim: lock, read; complete: BEGIN, store, COMMIT, unlock (one implicit
		// transaction per round trip: the unlock needs the explicit COMMIT before it)
		return new Cost(6, 2, 1);
	}

	@Override
	Cost replay() {
		return new Cost(2, 1, 0);
	}

	@Override
	Cost freshKeysBatched() {
		return new Cost(6, 2, 1);
	}

	@Override
	Cost replaysBatched() {
		return new Cost(2, 1, 0);
	}

}
