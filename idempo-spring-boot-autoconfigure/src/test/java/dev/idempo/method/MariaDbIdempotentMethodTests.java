package dev.idempo.method;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.LockingStore;
import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The method contract on the mysql store, against the server {@link TestDatabases}
 * resolves.
 *
 * @author idempo
 */
class MariaDbIdempotentMethodTests extends IdempotentMethodContractTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.mysql(), "mysql", TABLE);
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.mysql().dropTable(TABLE);
	}

	@Test
	void runsOnTheSqlStore(@Autowired LockingStore store) {
		assertThat(store).isInstanceOf(JdbcLockingStore.class);
	}

}
