package dev.idempo.webflux;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The WebFlux HTTP contract on the MySQL/MariaDB store (its blocking JDBC calls run off
 * the event loop), with the table created by {@code initialize-schema=always}.
 *
 * @author idempo
 */
@DirtiesContext
class MySqlWebFluxHttpTests extends WebFluxHttpContractTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	@DynamicPropertySource
	static void mysql(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.mysql(), "mysql", TABLE);
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.mysql().dropTable(TABLE);
	}

	@Override
	Class<?> storeType() {
		return JdbcLockingStore.class;
	}

}
