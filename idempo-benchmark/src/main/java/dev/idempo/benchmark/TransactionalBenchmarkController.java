package dev.idempo.benchmark;

import dev.idempo.Idempotent;
import dev.idempo.benchmark.BenchmarkCounters.Handler;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The inserting handler as a transactional one ({@code POST /pay-tx}): the payment row
 * and idempo's record commit in one transaction. Only with the postgres and mysql stores,
 * the only ones where transactional handlers can run, and only in the Spring MVC
 * application: WebFlux handlers cannot be transactional (idempo fails such an application
 * at start-up).
 */
@RestController
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnExpression("'${idempo.store.type:memory}' == 'postgres' or '${idempo.store.type:memory}' == 'mysql'")
class TransactionalBenchmarkController {

	private final BenchmarkController payments;

	TransactionalBenchmarkController(BenchmarkController payments) {
		this.payments = payments;
	}

	@PostMapping("/pay-tx")
	@Idempotent(ttl = "24h", transactional = true)
	ResponseEntity<PaymentResponse> payTx(@RequestBody PaymentRequest request) {
		return this.payments.create(request, Handler.PAY_TX, true);
	}

}
