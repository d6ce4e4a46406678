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
 * Transactional mode on MariaDB/MySQL (MariaDB driver) with JPA (Hibernate) and its
 * JpaTransactionManager.
 */
class MariaDbJpaTransactionalHttpTest extends JpaTransactionalHttpTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	private static final String PAYMENTS = "payments_" + TABLE;

	static TestDatabase server() {
		return TestDatabases.mysql();
	}

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, server(), "mysql", TABLE);
		registry.add("test.payments-table", () -> PAYMENTS);
		registry.add("test.jpa", () -> "true");
		registry.add("idempo.max-response-size", () -> "2KB");
	}

	@BeforeAll
	static void createPayments() {
		server().jdbc().execute(paymentsDdl(false, PAYMENTS));
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
	void kill(JdbcTemplate admin, long session) {
		admin.execute("KILL " + session);
	}

}
