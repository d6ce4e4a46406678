package dev.idempo.web;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The configured response and fingerprint policies on the MySQL/MariaDB store.
 *
 * @author idempo
 */
@DirtiesContext
class MySqlResponsePolicyHttpTests extends ResponsePolicyHttpTests {

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
