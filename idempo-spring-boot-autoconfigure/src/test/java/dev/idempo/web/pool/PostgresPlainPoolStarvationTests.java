package dev.idempo.web.pool;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The pool-starvation proof on the PostgreSQL store with batching off.
 *
 * @author idempo
 */
class PostgresPlainPoolStarvationTests extends PoolStarvationTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		TestDatabase database = TestDatabases.postgres();
		SqlStoreProperties.register(registry, database, "postgres", TABLE);
		registry.add("test.handler-query", () -> "SELECT 1 FROM pg_sleep(0.01)");
		registry.add("idempo.store.jdbc.batching", () -> "false");
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.postgres().dropTable(TABLE);
	}

}
