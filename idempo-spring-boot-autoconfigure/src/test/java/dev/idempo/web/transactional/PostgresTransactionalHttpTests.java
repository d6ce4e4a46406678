package dev.idempo.web.transactional;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Transactional mode on PostgreSQL with a DataSourceTransactionManager.
 */
class PostgresTransactionalHttpTests extends TransactionalHttpTests {

	static final TransactionalSetup SETUP = new TransactionalSetup(TestDatabases::postgres, true, false, Map.of());

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
