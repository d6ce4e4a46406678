package dev.idempo.store.jdbc;

import javax.sql.DataSource;

import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * {@link MySqlStatementCountTests} without multi-statements: each statement is a round
 * trip.
 *
 * @author idempo
 */
class MySqlStatementAtATimeCountTests extends MySqlStatementCountTests {

	@Override
	DataSource dataSource(TestDatabase database) {
		return database.dataSource();
	}

	@Override
	Cost freshKey() {
		return new Cost(4, 4, 1);
	}

	@Override
	Cost replay() {
		return new Cost(2, 2, 0);
	}

	@Override
	Cost freshKeysBatched() {
		return new Cost(5 + CALLERS, 5 + CALLERS, 1);
	}

	@Override
	Cost replaysBatched() {
		return new Cost(2, 2, 0);
	}

}
