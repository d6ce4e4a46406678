package dev.idempo.method;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Transactional idempotent methods on the mysql store.
 *
 * @author idempo
 */
class MariaDbTransactionalMethodTests extends TransactionalMethodTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	private static final String LEDGER = "ledger_" + TABLE;

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.mysql(), "mysql", TABLE);
		registry.add("spring.autoconfigure.exclude", () -> HIBERNATE);
		registry.add("test.ledger-table", () -> LEDGER);
	}

	@BeforeAll
	static void createLedger() {
		TestDatabases.mysql()
			.jdbc()
			.execute("CREATE TABLE " + LEDGER + " (id VARCHAR(64) NOT NULL, amount INT NOT NULL)");
	}

	@AfterAll
	static void dropTables() {
		TestDatabases.mysql().dropTable(TABLE);
		TestDatabases.mysql().dropTable(LEDGER);
	}

	@Override
	TestDatabase database() {
		return TestDatabases.mysql();
	}

	@Override
	String table() {
		return TABLE;
	}

}
