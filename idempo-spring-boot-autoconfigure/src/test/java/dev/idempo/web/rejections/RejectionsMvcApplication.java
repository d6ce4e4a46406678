package dev.idempo.web.rejections;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.Idempotent;
import dev.idempo.core.IdempotencyListener;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring MVC application whose handlers call a blocking {@code @Idempotent(key = ...)}
 * method and let what it throws escape: a key in progress or reused reaches idempo's
 * {@code IdempotencyExceptionResolver}, unless the application's own
 * {@code @ExceptionHandler} takes it.
 *
 * @author idempo
 */
@SpringBootApplication
public class RejectionsMvcApplication {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
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

	/** Charges once per id; a charge can be held until the test releases it. */
	@Service
	public static class Charges {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private volatile CountDownLatch entered = new CountDownLatch(0);

		private volatile CountDownLatch release = new CountDownLatch(0);

		@Idempotent(key = "#id")
		public Charge charge(String id, int amount) {
			int run = this.runs.computeIfAbsent(id, (key) -> new AtomicInteger()).incrementAndGet();
			CountDownLatch release = this.release;
			this.entered.countDown();
			try {
				if (!release.await(30, TimeUnit.SECONDS)) {
					throw new IllegalStateException("never released");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			return new Charge(id, amount, run);
		}

		public int runs(String id) {
			AtomicInteger runs = this.runs.get(id);
			return (runs != null) ? runs.get() : 0;
		}

		public void hold() {
			this.entered = new CountDownLatch(1);
			this.release = new CountDownLatch(1);
		}

		public boolean awaitEntered() throws InterruptedException {
			return this.entered.await(30, TimeUnit.SECONDS);
		}

		public void release() {
			this.release.countDown();
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
		Charge charge(@PathVariable String id, @RequestParam int amount) {
			return this.charges.charge(id, amount);
		}

		@PostMapping("/idempotent-charges/{id}")
		@Idempotent
		Charge idempotentCharge(@PathVariable String id, @RequestParam int amount) {
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
		Charge charge(@PathVariable String id, @RequestParam int amount) {
			return this.charges.charge(id, amount);
		}

		// tag::application-answer[]
		@ExceptionHandler(IdempotencyInProgressException.class)
		ResponseEntity<ProblemDetail> inProgress(IdempotencyInProgressException ex) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
					"This charge is being processed; try again in a moment.");
			return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
				.header(HttpHeaders.RETRY_AFTER, "2")
				.body(problem);
		}
		// end::application-answer[]

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
