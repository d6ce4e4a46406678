package dev.idempo.webflux.rejections;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.Idempotent;
import dev.idempo.core.IdempotencyListener;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A WebFlux application whose handlers call an {@code @Idempotent(key = ...)} method
 * returning a {@code Mono}, and let what it throws escape: a key in progress or reused
 * reaches idempo's {@code IdempotencyWebExceptionHandler}, unless the application's own
 * {@code @ExceptionHandler} takes it.
 *
 * @author idempo
 */
@SpringBootApplication
public class RejectionsWebFluxApplication {

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	RecordingListener recordingListener() {
		return new RecordingListener();
	}

	/** What a charge returns, stored as the idempotent method's result. */
	public record Charge(String id, int amount, int run) {
	}

	/**
	 * Charges once per id; a charge can be held, without blocking a thread, until the
	 * test releases it.
	 */
	@Service
	public static class Charges {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private volatile CountDownLatch entered = new CountDownLatch(0);

		private volatile Sinks.Empty<Void> release = released();

		@Idempotent(key = "#id")
		public Mono<Charge> charge(String id, int amount) {
			return Mono.defer(() -> {
				int run = this.runs.computeIfAbsent(id, (key) -> new AtomicInteger()).incrementAndGet();
				Sinks.Empty<Void> release = this.release;
				this.entered.countDown();
				return release.asMono().then(Mono.fromSupplier(() -> new Charge(id, amount, run)));
			});
		}

		public int runs(String id) {
			AtomicInteger runs = this.runs.get(id);
			return (runs != null) ? runs.get() : 0;
		}

		public void hold() {
			this.entered = new CountDownLatch(1);
			this.release = Sinks.empty();
		}

		public boolean awaitEntered() throws InterruptedException {
			return this.entered.await(30, TimeUnit.SECONDS);
		}

		public void release() {
			this.release.tryEmitEmpty();
		}

		private static Sinks.Empty<Void> released() {
			Sinks.Empty<Void> sink = Sinks.empty();
			sink.tryEmitEmpty();
			return sink;
		}

	}

	/** Lets the idempotent method's exceptions escape. */
	@RestController
	static class ChargesController {

		private final Charges charges;

		ChargesController(Charges charges) {
			this.charges = charges;
		}

		@PostMapping("/charges/{id}")
		Mono<Charge> charge(@PathVariable String id, @RequestParam int amount) {
			return this.charges.charge(id, amount);
		}

		@PostMapping("/idempotent-charges/{id}")
		@Idempotent
		Mono<Charge> idempotentCharge(@PathVariable String id, @RequestParam int amount) {
			return this.charges.charge(id, amount);
		}

	}

	/** Answers a key in progress itself. */
	@RestController
	static class HandledChargesController {

		private final Charges charges;

		HandledChargesController(Charges charges) {
			this.charges = charges;
		}

		@PostMapping("/handled-charges/{id}")
		Mono<Charge> charge(@PathVariable String id, @RequestParam int amount) {
			return this.charges.charge(id, amount);
		}

		@ExceptionHandler(IdempotencyInProgressException.class)
		ResponseEntity<ProblemDetail> inProgress(IdempotencyInProgressException ex) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
					"This charge is being processed; try again in a moment.");
			return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
				.header(HttpHeaders.RETRY_AFTER, "2")
				.body(problem);
		}

	}

	/** Records the outcomes idempo counts. */
	public static class RecordingListener implements IdempotencyListener {

		private final List<String> outcomes = new CopyOnWriteArrayList<>();

		@Override
		public void onRequest(Source source, RequestOutcome outcome) {
			this.outcomes.add(source.tag() + ":" + outcome.tag());
		}

		public List<String> outcomes() {
			return this.outcomes;
		}

	}

}
