package dev.idempo.sample;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Payments, refunds, transfers and receipts: one endpoint per idempo feature.
 *
 * @author idempo
 */
@RestController
public class PaymentsController {

	private final Map<String, Payment> payments = new ConcurrentHashMap<>();

	private final AtomicLong sequence = new AtomicLong();

	private final Duration bankDelay;

	public PaymentsController(@Value("${sample.bank-delay:3s}") Duration bankDelay) {
		this.bankDelay = bankDelay;
	}

	/**
	 * Creates a payment. A retry with the same key gets the same payment back instead of
	 * paying twice; the record is kept for {@code idempo.response-ttl}.
	 */
	@PostMapping("/payments")
	@Idempotent
	ResponseEntity<Object> createPayment(@RequestBody PaymentRequest request) {
		if (request.amount() == null || request.amount().signum() <= 0) {
			// a 4xx is stored too: retrying the same bad request gets the same answer
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, "amount must be positive");
			problem.setTitle("Invalid payment");
			return ResponseEntity.badRequest().body(problem);
		}
		Payment payment = save(request, "captured");
		return ResponseEntity.created(URI.create("/payments/" + payment.id())).body(payment);
	}

	@GetMapping("/payments/{id}")
	Payment getPayment(@PathVariable String id) {
		Payment payment = this.payments.get(id);
		if (payment == null) {
			throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no payment " + id);
		}
		return payment;
	}

	/**
	 * Refunds a payment; refund records are kept for a shorter, configurable time.
	 */
	@PostMapping("/payments/{id}/refunds")
	@Idempotent(ttl = "${sample.refund-ttl:1h}")
	ResponseEntity<Map<String, Object>> refund(@PathVariable String id) {
		Payment payment = getPayment(id);
		Map<String, Object> refund = Map.of("refundId", "rf_" + this.sequence.incrementAndGet(), "paymentId",
				payment.id(), "amount", payment.amount(), "refundedAt", Instant.now().toString());
		return ResponseEntity.status(HttpStatus.CREATED).body(refund);
	}

	/**
	 * Transfers money through a slow bank call. The key is required: a transfer without
	 * one is refused with 400. Send the same request twice at once to see a 409.
	 */
	@PostMapping("/transfers")
	@Idempotent(required = true)
	ResponseEntity<Payment> transfer(@RequestBody PaymentRequest request) throws InterruptedException {
		Thread.sleep(this.bankDelay.toMillis());
		Payment payment = save(request, "transferred");
		return ResponseEntity.created(URI.create("/payments/" + payment.id())).body(payment);
	}

	/**
	 * E-mails a receipt. Only locked, never replayed: two concurrent sends of one key get
	 * one e-mail and a 409, a later retry sends it again.
	 */
	@PostMapping("/payments/{id}/receipts")
	@Idempotent(cacheResponse = false)
	Map<String, Object> sendReceipt(@PathVariable String id) {
		Payment payment = getPayment(id);
		return Map.of("paymentId", payment.id(), "sentTo", payment.recipient(), "sentAt", Instant.now().toString());
	}

	private Payment save(PaymentRequest request, String status) {
		String id = "pay_" + this.sequence.incrementAndGet();
		Payment payment = new Payment(id, request.amount().setScale(2, java.math.RoundingMode.HALF_UP),
				(request.currency() != null) ? request.currency() : "EUR", request.recipient(), status, Instant.now());
		this.payments.put(id, payment);
		return payment;
	}

}
