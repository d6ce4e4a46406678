package dev.idempo.store.jdbc;

import javax.sql.DataSource;

/**
 * The contract on MySQL or MariaDB through connections that refuse multi-statements, as a
 * user-supplied data source may: every statement is its own round trip.
 *
 * @author idempo
 */
class MySqlLockingStoreStatementAtATimeTest extends MySqlLockingStoreTest {

	@Override
	DataSource dataSource() {
		return database().dataSource();
	}

}
