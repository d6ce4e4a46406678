package dev.idempo.web.faults;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Cut and slow connections on the MySQL/MariaDB store (MariaDB's driver), whose locks are
 * {@code GET_LOCK}s of its lock sessions.
 *
 * @author idempo
 */
class MariaDbConnectionFaultsHttpTests extends SqlConnectionFaultsHttpTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	private static final TcpProxy proxy = TestDatabases.mysql().proxy();

	@DynamicPropertySource
	static void mariaDb(DynamicPropertyRegistry registry) {
		register(registry, TestDatabases.mysql(), proxy, "mysql", TABLE);
	}

	@AfterAll
	static void cleanUp() {
		proxy.close();
		TestDatabases.mysql().dropTable(TABLE);
	}

	@Override
	TcpProxy proxy() {
		return proxy;
	}

}
