package dev.idempo.webflux;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The WebFlux HTTP contract on the PostgreSQL store (its blocking JDBC calls run off the
 * event loop), with the table created by {@code initialize-schema=always}.
 *
 * @author idempo
 */
@DirtiesContext
class PostgresWebFluxHttpTests extends WebFluxHttpContractTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.postgres(), "postgres", TABLE);
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.postgres().dropTable(TABLE);
	}

	@Override
	Class<?> storeType() {
		return JdbcLockingStore.class;
	}

}
