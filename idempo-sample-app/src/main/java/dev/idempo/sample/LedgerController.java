package dev.idempo.sample;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.URI;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;

import dev.idempo.Idempotent;

import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Payments kept in the application's database (the postgres and mysql profiles), written
 * by a transactional handler: the payment row and idempo's record of the response commit
 * in one transaction, so a payment is never made twice, not even when the instance dies
 * between the insert and the response.
 *
 * @author idempo
 */
@RestController
@Profile({ "postgres", "mysql" })
public class LedgerController {

	private static final String TABLE = "sample_ledger_payments";

	private final JdbcTemplate jdbc;

	public LedgerController(JdbcTemplate jdbc) {
		this.jdbc = jdbc;
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (id VARCHAR(40) PRIMARY KEY, amount DECIMAL(12, 2) "
				+ "NOT NULL, currency VARCHAR(3) NOT NULL, recipient VARCHAR(100), created_at TIMESTAMP NOT NULL)");
	}

	/**
	 * Creates a payment in the database. The handler runs inside the transaction idempo
	 * began; the response is sent only once the payment and its record have committed.
	 */
	@PostMapping("/ledger/payments")
	@Idempotent(transactional = true)
	ResponseEntity<Object> createPayment(@RequestBody PaymentRequest request) {
		if (request.amount() == null || request.amount().signum() <= 0) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, "amount must be positive");
			problem.setTitle("Invalid payment");
			return ResponseEntity.badRequest().body(problem);
		}
		Payment payment = new Payment("pay_" + UUID.randomUUID(), request.amount().setScale(2, RoundingMode.HALF_UP),
				(request.currency() != null) ? request.currency() : "EUR", request.recipient(), "captured",
				Instant.now().truncatedTo(ChronoUnit.MILLIS));
		this.jdbc.update(
				"INSERT INTO " + TABLE + " (id, amount, currency, recipient, created_at) VALUES (?, ?, ?, ?, ?)",
				payment.id(), payment.amount(), payment.currency(), payment.recipient(),
				Timestamp.from(payment.createdAt()));
		return ResponseEntity.created(URI.create("/ledger/payments/" + payment.id())).body(payment);
	}

	@GetMapping("/ledger/payments/{id}")
	Payment getPayment(@PathVariable String id) {
		List<Payment> found = this.jdbc.query(
				"SELECT id, amount, currency, recipient, created_at FROM " + TABLE + " WHERE id = ?",
				(row, index) -> new Payment(row.getString(1), row.getObject(2, BigDecimal.class), row.getString(3),
						row.getString(4), "captured", row.getTimestamp(5).toInstant()),
				id);
		if (found.isEmpty()) {
			throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no payment " + id);
		}
		return found.get(0);
	}

}
