package dev.idempo.method;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.Idempotent;
import dev.idempo.core.CurrentIdempotentCall;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

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

	/** Jackson cannot write it: its only property throws. */
	static class Unwritable {

		public String getValue() {
			throw new IllegalStateException("not writable");
		}

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
		public Unwritable bookUnwritable(String id) {
			this.jdbc.update("INSERT INTO " + this.table + " (id, amount) VALUES (?, ?)", id, 0);
			return new Unwritable();
		}

		// accessors, not fields: the bean is a proxy
		public int executions() {
			return this.executions.get();
		}

		public void failNextAfterInsert() {
			this.failAfterInsert.set(true);
		}

		public AtomicBoolean boundAtCompletion() {
			return this.boundAtCompletion;
		}

		/**
		 * Not transactional for idempo, but {@code @Transactional}: records whether the
		 * idempotent call was still bound when Spring's transaction completed, which it
		 * is only if idempo's advisor runs outside the transaction's.
		 */
		@Transactional
		@Idempotent(key = "#id")
		public void insideSpringsTransaction(String id) {
			this.jdbc.update("INSERT INTO " + this.table + " (id, amount) VALUES (?, ?)", id, 1);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCompletion(int status) {
					Ledger.this.boundAtCompletion.set(CurrentIdempotentCall.current() != null);
				}

			});
		}

		final AtomicBoolean boundAtCompletion = new AtomicBoolean();

		public int rows(String id) {
			Integer count = this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.table + " WHERE id = ?",
					Integer.class, id);
			return (count != null) ? count : 0;
		}

	}

}
