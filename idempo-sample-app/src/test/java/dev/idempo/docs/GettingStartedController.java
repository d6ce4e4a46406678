package dev.idempo.docs;

import java.net.URI;

// tag::intro-import[]
import dev.idempo.Idempotent;
// end::intro-import[]
import dev.idempo.sample.Payment;
import dev.idempo.sample.PaymentRequest;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The handler at the top of the README.
 */
@RestController
class GettingStartedController {

	private final Payments payments;

	GettingStartedController(Payments payments) {
		this.payments = payments;
	}

	// tag::intro-handler[]
	@PostMapping("/payments")
	@Idempotent(ttl = "24h")
	ResponseEntity<Payment> create(@RequestBody PaymentRequest request) {
		Payment payment = this.payments.save(request);
		return ResponseEntity.created(URI.create("/payments/" + payment.id())).body(payment);
	}
	// end::intro-handler[]

}
