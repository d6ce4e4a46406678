package dev.idempo.client.downstream;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;
import dev.idempo.core.CurrentIdempotentCall;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The downstream service of the client's proofs: a real idempo server whose
 * {@code POST /charges} is {@code @Idempotent}. It counts the handler's executions per
 * {@code reference} of the JSON body, can hold the handler until the test lets it go, and
 * logs every request that reaches it (the key it carried, the status it got, whether it
 * was a replay) from a filter in front of idempo's.
 *
 * @author idempo
 */
@SpringBootApplication
public class DownstreamApplication {

	/**
	 * A request header that tests set to the body's reference, so that the request log
	 * can be searched by it (replays never reach the handler).
	 */
	public static final String REFERENCE_HEADER = "X-Test-Reference";

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	Charges charges() {
		return new Charges();
	}

	@Bean
	FilterRegistrationBean<OncePerRequestFilter> requestLog(Charges charges) {
		FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(
				new OncePerRequestFilter() {

					@Override
					protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
							FilterChain chain) throws ServletException, IOException {
						long arrived = System.nanoTime();
						String key = request.getHeader("Idempotency-Key");
						String reference = request.getHeader(REFERENCE_HEADER);
						try {
							chain.doFilter(request, response);
						}
						finally {
							charges.requests.add(new Request(key, reference, arrived, response.getStatus(),
									"true".equals(response.getHeader("Idempotent-Replayed"))));
						}
					}

				});
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
		return registration;
	}

	/** A request as it reached the service. */
	public record Request(@Nullable String key, @Nullable String reference, long arrivedNanos, int status,
			boolean replayed) {
	}

	/** What the service did: executions per reference, the requests, a hold. */
	public static final class Charges {

		private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

		final List<Request> requests = new CopyOnWriteArrayList<>();

		private volatile CountDownLatch entered = new CountDownLatch(1);

		private volatile CountDownLatch release = new CountDownLatch(0);

		/**
		 * How often the handler ran for a reference.
		 * @param reference the reference
		 * @return the count
		 */
		public int executions(String reference) {
			AtomicInteger count = this.executions.get(reference);
			return (count != null) ? count.get() : 0;
		}

		/**
		 * The requests sent with this reference in
		 * {@value DownstreamApplication#REFERENCE_HEADER}, in the order they ended.
		 * @param reference the reference
		 * @return the requests
		 */
		public List<Request> requestsWithReference(String reference) {
			return this.requests.stream().filter((request) -> reference.equals(request.reference())).toList();
		}

		/**
		 * The requests that carried this key, in the order they ended.
		 * @param key the key header's value
		 * @return the requests
		 */
		public List<Request> requests(String key) {
			return this.requests.stream().filter((request) -> key.equals(request.key())).toList();
		}

		/** The next handler waits, once inside, until {@link #release()}. */
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

		int execute(String reference) {
			int execution = this.executions.computeIfAbsent(reference, (r) -> new AtomicInteger()).incrementAndGet();
			this.entered.countDown();
			try {
				if (!this.release.await(60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("the held handler was never released");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			return execution;
		}

	}

	@RestController
	static class ChargesController {

		private final Charges charges;

		ChargesController(Charges charges) {
			this.charges = charges;
		}

		/**
		 * Tells which idempotent execution is bound to the thread that runs the handler.
		 */
		@PostMapping("/identity")
		@Idempotent
		Map<String, String> identity() {
			return Map.of("identity", currentIdentity());
		}

		/**
		 * Tells which idempotent execution is bound to the thread that runs the handler's
		 * {@code Callable}.
		 */
		@PostMapping("/identity-async")
		@Idempotent
		Callable<Map<String, String>> identityAsync() {
			return () -> Map.of("identity", currentIdentity());
		}

		/**
		 * Fails while bound, so that the binding must end on the exception's path.
		 */
		@PostMapping("/identity-failing")
		@Idempotent
		Map<String, String> identityFailing() {
			throw new IllegalStateException("failed while bound to " + currentIdentity());
		}

		private static String currentIdentity() {
			CurrentIdempotentCall call = CurrentIdempotentCall.current();
			return (call != null) ? call.identity() : "none";
		}

		@PostMapping("/charges")
		@Idempotent
		ResponseEntity<Map<String, Object>> charge(@RequestBody Map<String, Object> charge) {
			String reference = String.valueOf(charge.get("reference"));
			int execution = this.charges.execute(reference);
			return ResponseEntity.status(201).body(Map.of("reference", reference, "execution", execution));
		}

	}

}
