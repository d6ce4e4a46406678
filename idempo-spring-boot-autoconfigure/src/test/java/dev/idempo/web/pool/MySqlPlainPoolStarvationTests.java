package dev.idempo.web.pool;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The pool-starvation proof on the MySQL/MariaDB store with batching off.
 *
 * @author idempo
 */
class MySqlPlainPoolStarvationTests extends PoolStarvationTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	@DynamicPropertySource
	static void mysql(DynamicPropertyRegistry registry) {
		TestDatabase database = TestDatabases.mysql();
		SqlStoreProperties.register(registry, database, "mysql", TABLE);
		registry.add("test.handler-query", () -> "SELECT SLEEP(0.01)");
		registry.add("idempo.store.jdbc.batching", () -> "false");
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.mysql().dropTable(TABLE);
	}

}
