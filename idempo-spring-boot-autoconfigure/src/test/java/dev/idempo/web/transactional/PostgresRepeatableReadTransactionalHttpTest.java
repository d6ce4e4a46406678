package dev.idempo.web.transactional;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Transactional mode on PostgreSQL when the connections default to REPEATABLE READ:
 * idempo notices that its read could miss a record and runs its transactions at READ
 * COMMITTED.
 */
class PostgresRepeatableReadTransactionalHttpTest extends TransactionalHttpTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	private static final String PAYMENTS = "payments_" + TABLE;

	static TestDatabase server() {
		return TestDatabases.postgres();
	}

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, server(), "postgres", TABLE);
		registry.add("test.payments-table", () -> PAYMENTS);
		registry.add("test.jpa", () -> "false");
		registry.add("idempo.max-response-size", () -> "2KB");
		registry.add("spring.autoconfigure.exclude", () -> HIBERNATE);
		registry.add("spring.datasource.hikari.transaction-isolation", () -> "TRANSACTION_REPEATABLE_READ");
	}

	@BeforeAll
	static void createPayments() {
		server().jdbc().execute(paymentsDdl(true, PAYMENTS));
	}

	@AfterAll
	static void dropTables() {
		server().dropTable(PAYMENTS);
		server().dropTable(TABLE);
	}

	@Override
	TestDatabase database() {
		return server();
	}

	@Override
	boolean jpa() {
		return false;
	}

	@Override
	void kill(JdbcTemplate admin, long session) {
		admin.queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, (int) session);
	}

}
