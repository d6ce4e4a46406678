package dev.idempo.web.transactional;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Transactional mode on PostgreSQL when the connections default to REPEATABLE READ:
 * idempo notices that its read could miss a record and runs its transactions at READ
 * COMMITTED.
 */
class PostgresRepeatableReadTransactionalHttpTests extends TransactionalHttpTests {

	static final TransactionalSetup SETUP = new TransactionalSetup(TestDatabases::postgres, true, false,
			Map.of("spring.datasource.hikari.transaction-isolation", "TRANSACTION_REPEATABLE_READ"));

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		SETUP.register(registry);
	}

	@BeforeAll
	static void createTables() {
		SETUP.createTables();
	}

	@AfterAll
	static void dropTables() {
		SETUP.dropTables();
	}

	@Override
	TransactionalSetup setup() {
		return SETUP;
	}

}
