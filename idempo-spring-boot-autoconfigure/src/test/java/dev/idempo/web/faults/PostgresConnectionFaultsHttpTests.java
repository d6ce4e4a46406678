package dev.idempo.web.faults;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Cut and slow connections on the PostgreSQL store, whose locks are advisory locks of its
 * lock sessions.
 *
 * @author idempo
 */
class PostgresConnectionFaultsHttpTests extends SqlConnectionFaultsHttpTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	private static final TcpProxy proxy = TestDatabases.postgres().proxy();

	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		register(registry, TestDatabases.postgres(), proxy, "postgres", TABLE);
	}

	@AfterAll
	static void cleanUp() {
		proxy.close();
		TestDatabases.postgres().dropTable(TABLE);
	}

	@Override
	TcpProxy proxy() {
		return proxy;
	}

}
