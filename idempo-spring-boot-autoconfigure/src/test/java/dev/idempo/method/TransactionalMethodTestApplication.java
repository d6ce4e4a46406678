package dev.idempo.method;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A non-web application whose idempotent method writes a row in the transaction idempo
 * begins.
 *
 * @author idempo
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class TransactionalMethodTestApplication {

	@Bean
	Ledger ledger(JdbcTemplate jdbc, @Value("${test.ledger-table}") String table) {
		return new Ledger(jdbc, table);
	}

	record Entry(String id, int amount) {
	}

	static class Ledger {

		private final JdbcTemplate jdbc;

		private final String table;

		final AtomicBoolean failAfterInsert = new AtomicBoolean();

		final AtomicInteger executions = new AtomicInteger();

		Ledger(JdbcTemplate jdbc, String table) {
			this.jdbc = jdbc;
			this.table = table;
		}

		@Idempotent(key = "#id", transactional = true)
		public Entry book(String id, int amount) {
			this.executions.incrementAndGet();
			this.jdbc.update("INSERT INTO " + this.table + " (id, amount) VALUES (?, ?)", id, amount);
			if (this.failAfterInsert.getAndSet(false)) {
				throw new IllegalStateException("failed after its insert");
			}
			return new Entry(id, amount);
		}

		@Idempotent(key = "#id", transactional = true)
		public Object bookUnwritable(String id) {
			this.jdbc.update("INSERT INTO " + this.table + " (id, amount) VALUES (?, ?)", id, 0);
			// no properties: Jackson refuses to write it
			return new Object();
		}

		int rows(String id) {
			Integer count = this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.table + " WHERE id = ?",
					Integer.class, id);
			return (count != null) ? count : 0;
		}

	}

}
