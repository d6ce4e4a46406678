package dev.idempo.benchmark;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempo.Idempotent;
import dev.idempo.benchmark.BenchmarkCounters.Handler;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The measured endpoints. Each pair runs the same handler, once without and once with
 * {@code @Idempotent}, so the difference between them is what idempo costs.
 *
 * @author idempo
 */
@RestController
class BenchmarkController {

	private final BenchmarkCounters counters;

	private final Payments payments;

	private final SlowGate slowGate;

	private final AtomicLong sequence = new AtomicLong();

	BenchmarkController(BenchmarkCounters counters, Payments payments, SlowGate slowGate) {
		this.counters = counters;
		this.payments = payments;
		this.slowGate = slowGate;
	}

	@PostMapping("/plain")
	ResponseEntity<PaymentResponse> plain(@RequestBody PaymentRequest request) {
		return create(request, Handler.PLAIN, false);
	}

	@PostMapping("/idem")
	@Idempotent(ttl = "24h")
	ResponseEntity<PaymentResponse> idem(@RequestBody PaymentRequest request) {
		return create(request, Handler.IDEM, false);
	}

	@PostMapping("/pay-plain")
	ResponseEntity<PaymentResponse> payPlain(@RequestBody PaymentRequest request) {
		return create(request, Handler.PAY_PLAIN, true);
	}

	@PostMapping("/pay-idem")
	@Idempotent(ttl = "24h")
	ResponseEntity<PaymentResponse> payIdem(@RequestBody PaymentRequest request) {
		return create(request, Handler.PAY_IDEM, true);
	}

	/**
	 * Holds its key in flight until {@code POST /bench/slow/release}, for the 409 case.
	 */
	@PostMapping("/slow-idem")
	@Idempotent(ttl = "24h")
	ResponseEntity<PaymentResponse> slowIdem(@RequestBody PaymentRequest request) throws InterruptedException {
		this.slowGate.pass();
		return create(request, Handler.SLOW_IDEM, false);
	}

	ResponseEntity<PaymentResponse> create(PaymentRequest request, Handler handler, boolean insert) {
		this.counters.executed(handler);
		String id = "pay_" + Long.toString(this.sequence.incrementAndGet(), 36) + "_" + handler.name().toLowerCase();
		Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
		if (insert) {
			this.payments.insert(id, request, now);
		}
		long fee = Math.max(25, request.amount() / 100);
		PaymentResponse response = new PaymentResponse(id, "payment", "accepted", request.reference(), request.amount(),
				fee, request.amount() - fee, request.currency(), request.recipient(), request.recipientIban(),
				request.description(), request.metadata(), now.toString(),
				now.plus(1, ChronoUnit.DAYS).truncatedTo(ChronoUnit.DAYS).toString(),
				List.of(new PaymentResponse.Event("payment.created", now.toString(),
						"Payment accepted for processing; funds are reserved on the source account"),
						new PaymentResponse.Event("payment.screened", now.toString(),
								"Sanctions and fraud screening passed without manual review"),
						new PaymentResponse.Event("payment.scheduled", now.toString(),
								"Scheduled for the next settlement window of the recipient's bank")),
				Map.of("self", "/payments/" + id, "refunds", "/payments/" + id + "/refunds", "receipt",
						"/payments/" + id + "/receipt"));
		return ResponseEntity.status(HttpStatus.CREATED).body(response);
	}

}
