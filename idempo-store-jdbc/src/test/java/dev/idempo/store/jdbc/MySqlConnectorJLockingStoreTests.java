package dev.idempo.store.jdbc;

import java.util.Properties;

import javax.sql.DataSource;

import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * The contract on MySQL or MariaDB through MySQL's own driver, {@code mysql-connector-j}.
 *
 * @author idempo
 */
class MySqlConnectorJLockingStoreTests extends MySqlLockingStoreTests {

	@Override
	DataSource dataSource(TestDatabase database) {
		Properties properties = new Properties();
		properties.setProperty("allowMultiQueries", "true");
		return database.withScheme("jdbc:mysql:").dataSource(properties);
	}

}
