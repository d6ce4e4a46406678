package dev.idempo.docs;

import java.math.BigDecimal;
import java.net.URI;
import java.util.UUID;

import dev.idempo.Idempotent;

import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The transactional handler of the README's "Exactly once with your database
 * transaction", writing its payments with a {@link JdbcTemplate}.
 */
@RestController
class TransactionalPaymentsController {

	private final Payments payments;

	TransactionalPaymentsController(Payments payments) {
		this.payments = payments;
	}

	// tag::transactional-handler[]
	@PostMapping("/payments")
	@Idempotent(transactional = true)
	ResponseEntity<Payment> create(@RequestBody PaymentRequest request) {
		// JdbcTemplate, JPA, a @Transactional service...
		Payment payment = this.payments.save(request);
		return ResponseEntity.created(URI.create("/payments/" + payment.id())).body(payment);
	}
	// end::transactional-handler[]

	record PaymentRequest(BigDecimal amount, String recipient) {
	}

	record Payment(String id, BigDecimal amount, String recipient) {
	}

	/**
	 * Payments in a table of the application's database.
	 */
	static class Payments {

		private final JdbcTemplate jdbc;

		private final String table;

		Payments(JdbcTemplate jdbc, String table) {
			this.jdbc = jdbc;
			this.table = table;
		}

		Payment save(PaymentRequest request) {
			Payment payment = new Payment(UUID.randomUUID().toString(), request.amount(), request.recipient());
			this.jdbc.update("INSERT INTO " + this.table + " (id, amount, recipient) VALUES (?, ?, ?)", payment.id(),
					payment.amount(), payment.recipient());
			return payment;
		}

	}

}
