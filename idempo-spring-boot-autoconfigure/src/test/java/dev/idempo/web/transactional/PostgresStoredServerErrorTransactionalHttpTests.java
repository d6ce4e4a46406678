package dev.idempo.web.transactional;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.idempo.testsupport.TestDatabases;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Transactional mode on PostgreSQL with {@code idempo.responses.stored} taking in 5xx: a
 * handler's 503 commits with its record and is replayed, as any stored response is.
 */
class PostgresStoredServerErrorTransactionalHttpTests extends TransactionalHttpTests {

	static final TransactionalSetup SETUP = new TransactionalSetup(TestDatabases::postgres, true, false,
			Map.of("idempo.responses.stored", "2xx,3xx,4xx,5xx"));

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
