package dev.idempo.store.jdbc;

import java.util.Properties;

import javax.sql.DataSource;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * The batching and the plain store give the same outcomes on MySQL or MariaDB (through
 * the MariaDB driver, multi-statements allowed).
 *
 * @author idempo
 */
class MySqlSchedulerDifferentialTests extends SchedulerDifferentialTests {

	@Override
	TestDatabase database() {
		return TestDatabases.mysql();
	}

	@Override
	String platform() {
		return "mysql";
	}

	@Override
	DataSource dataSource() {
		Properties properties = new Properties();
		properties.setProperty("allowMultiQueries", "true");
		return database().dataSource(properties);
	}

	@Override
	JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings) {
		return JdbcLockingStore.mysql(dataSource, settings, JdbcLockingStore.DEFAULT_LOCK_PREFIX);
	}

}
