package dev.idempo.web;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Immediate retries after responses that are not stored, on the MySQL/MariaDB store.
 *
 * @author idempo
 */
@DirtiesContext
class MySqlImmediateRetryHttpTests extends ImmediateRetryHttpTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	@DynamicPropertySource
	static void mysql(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.mysql(), "mysql", TABLE);
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.mysql().dropTable(TABLE);
	}

}
