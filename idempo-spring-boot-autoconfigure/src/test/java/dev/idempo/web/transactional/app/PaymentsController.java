package dev.idempo.web.transactional.app;

import java.io.IOException;
import java.util.Map;

import jakarta.servlet.http.HttpServletResponse;

import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * Transactional handlers that insert one payment and answer 201. The request header
 * {@code X-Behaviour} (not part of the fingerprint, so a retry can drop it) makes a
 * handler misbehave after its insert:
 * <ul>
 * <li>{@code fail}: throws;</li>
 * <li>{@code status-503}: answers 503;</li>
 * <li>{@code big}: answers a 4 KiB body;</li>
 * <li>{@code hold}: waits at the {@link Pauses} until the test lets it go;</li>
 * <li>{@code pause-before-commit}: waits at the {@link Pauses} when its transaction is
 * about to commit (after idempo inserted the record).</li>
 * </ul>
 */
@RestController
class PaymentsController {

	private final JdbcTemplate jdbc;

	private final Pauses pauses;

	private final String table;

	private final ObjectProvider<JpaPayments.PaymentService> jpa;

	PaymentsController(JdbcTemplate jdbc, Pauses pauses, @Value("${test.payments-table}") String table,
			ObjectProvider<JpaPayments.PaymentService> jpa) {
		this.jdbc = jdbc;
		this.pauses = pauses;
		this.table = table;
		this.jpa = jpa;
	}

	@PostMapping("/tx/jdbc/payments")
	@Idempotent(transactional = true)
	ResponseEntity<Map<String, String>> jdbc(@RequestBody String body, @RequestHeader("X-Reference") String reference,
			@RequestHeader(name = "X-Behaviour", required = false) @Nullable String behaviour) {
		this.jdbc.update("INSERT INTO " + this.table + " (reference, body) VALUES (?, ?)", reference, body);
		return respond(reference, behaviour);
	}

	@PostMapping("/tx/jpa/payments")
	@Idempotent(transactional = true)
	ResponseEntity<Map<String, String>> jpa(@RequestBody String body, @RequestHeader("X-Reference") String reference,
			@RequestHeader(name = "X-Behaviour", required = false) @Nullable String behaviour) {
		this.jpa.getObject().create(reference, body);
		return respond(reference, behaviour);
	}

	/**
	 * Inserts a payment and redirects to it with {@code sendRedirect}, which idempo holds
	 * back until the commit like any other response.
	 */
	@PostMapping("/tx/jdbc/redirect")
	@Idempotent(transactional = true)
	void redirect(@RequestBody String body, @RequestHeader("X-Reference") String reference,
			@RequestHeader(name = "X-Behaviour", required = false) @Nullable String behaviour,
			HttpServletResponse response) throws IOException {
		this.jdbc.update("INSERT INTO " + this.table + " (reference, body) VALUES (?, ?)", reference, body);
		respond(reference, behaviour);
		response.sendRedirect("/payments/" + reference);
	}

	private ResponseEntity<Map<String, String>> respond(String reference, @Nullable String behaviour) {
		if ("fail".equals(behaviour)) {
			throw new IllegalStateException("Failing after the insert");
		}
		if ("status-503".equals(behaviour)) {
			return ResponseEntity.status(503).body(Map.of("reference", reference));
		}
		if ("hold".equals(behaviour)) {
			this.pauses.arrive(sessionId());
		}
		if ("pause-before-commit".equals(behaviour)) {
			long session = sessionId();
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void beforeCommit(boolean readOnly) {
					PaymentsController.this.pauses.arrive(session);
				}

			});
		}
		String padding = "big".equals(behaviour) ? "x".repeat(4096) : "";
		return ResponseEntity.status(201)
			.header("Location", "/payments/" + reference)
			.body(Map.of("reference", reference, "status", "accepted", "padding", padding));
	}

	private long sessionId() {
		String product = this.jdbc
			.execute((java.sql.Connection connection) -> connection.getMetaData().getDatabaseProductName());
		String sql = "PostgreSQL".equalsIgnoreCase(product) ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()";
		Long id = this.jdbc.queryForObject(sql, Long.class);
		return (id != null) ? id : 0;
	}

}
