package dev.idempo.web;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The configured response and fingerprint policies on the PostgreSQL store.
 *
 * @author idempo
 */
@DirtiesContext
class PostgresResponsePolicyHttpTests extends ResponsePolicyHttpTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.postgres(), "postgres", TABLE);
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.postgres().dropTable(TABLE);
	}

}
