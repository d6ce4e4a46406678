package dev.idempo.web.hostile;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile keys and bodies on the PostgreSQL store, against the server
 * {@link TestDatabases} resolves, in a table of its own; records are counted with
 * {@code SELECT count(*)} on that table.
 *
 * @author idempo
 */
@DirtiesContext
class PostgresHostileInputHttpTests extends HostileInputHttpTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	@Autowired
	DataSource dataSource;

	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.postgres(), "postgres", TABLE);
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.postgres().dropTable(TABLE);
	}

	@Override
	protected long storedRecords() {
		Long count = new JdbcTemplate(this.dataSource).queryForObject("SELECT count(*) FROM " + TABLE, Long.class);
		return (count != null) ? count : 0;
	}

	@Test
	void runsOnThePostgresStore() {
		assertThat(this.store).isInstanceOf(JdbcLockingStore.class);
		assertThat(this.store.name()).isEqualTo("postgres");
	}

}
