package dev.idempo.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.idempo.client.IdempotencyClientListener.AttemptOutcome;
import dev.idempo.core.CurrentIdempotentCall;

import org.springframework.core.Ordered;
import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryListener;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.core.retry.Retryable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Sends idempotency keys and retries what a key makes safe to retry, for
 * {@code RestClient} and {@code RestTemplate}.
 * <ul>
 * <li>A request whose method is one of {@link IdempotencyClientSettings#keyedMethods()}
 * and that carries no key (in the key header or {@code X-Idempotency-Key}) gets one
 * before its first attempt: a fresh 128-bit random key, or, while an idempotent execution
 * runs on the calling thread ({@link CurrentIdempotentCall}), a key derived from that
 * execution's identity and the call's method, URI and ordinal, so that the execution
 * re-run after a crash sends the same keys again. A caller's own key is kept. The key is
 * sent as a Structured Fields string ({@code "..."}), as the IETF draft specifies.</li>
 * <li>A request that carries a key, or whose method is idempotent in HTTP (GET, HEAD,
 * OPTIONS, TRACE, PUT, DELETE), is retried up to
 * {@link IdempotencyClientSettings#maxAttempts()} attempts in all after an I/O failure
 * (refused, reset, timed out) or a 408, 409, 425, 429, 502, 503 or 504 answer, with the
 * same key and the same body bytes. It waits what {@code Retry-After} says, cut to
 * {@link IdempotencyClientSettings#maxRetryAfter()}, or else an exponential backoff with
 * jitter. Every answer it does not return is closed. The last attempt's answer or
 * exception reaches the caller unchanged, and so does every other answer.</li>
 * <li>A request with the attribute {@value #SINGLE_ATTEMPT_ATTRIBUTE} set to {@code true}
 * (its body must not be sent twice) gets its key but only one attempt.</li>
 * </ul>
 * It must be the first (outermost) of a client's interceptors, so that the interceptors
 * after it run again on every attempt (Spring Framework 7 builds the chain so that each
 * {@link ClientHttpRequestExecution#execute} call runs the rest of it anew, down to a new
 * request of the request factory), each attempt with a copy of the caller's headers so
 * that what they add is added once; the auto-configuration puts it there. Spring buffers
 * the body of every request that goes through interceptors, so the body it is given can
 * always be sent again. A second idempo interceptor on the same client (one added by hand
 * besides the auto-configured one) passes the request on untouched, so the attempts are
 * never multiplied. Attempts run on the calling thread, which waits between them:
 * {@link Thread#interrupt() interrupting} it ends the call with an
 * {@link InterruptedIOException}. The waiting and counting is Spring Framework's
 * {@link RetryTemplate}. {@link IdempotencyExchangeFilterFunction} does the same for
 * {@code WebClient}, without blocking.
 *
 * @author idempo
 */
public class IdempotencyClientInterceptor implements ClientHttpRequestInterceptor, Ordered {

	/**
	 * The request attribute that limits a request to one attempt: set it to
	 * {@code Boolean.TRUE} (with {@code RestClient}'s {@code attribute(name, value)}) for
	 * a request whose body must not be sent twice.
	 */
	public static final String SINGLE_ATTEMPT_ATTRIBUTE = "dev.idempo.client.single-attempt";

	/** Marks a request that an idempo interceptor is already running. */
	private static final String ACTIVE_ATTRIBUTE = IdempotencyClientInterceptor.class.getName() + ".active";

	private final KeyedCallPolicy policy;

	/**
	 * Creates an interceptor with {@link IdempotencyClientSettings#defaults()}.
	 */
	public IdempotencyClientInterceptor() {
		this(IdempotencyClientSettings.defaults());
	}

	/**
	 * Creates an interceptor.
	 * @param settings what it does
	 */
	public IdempotencyClientInterceptor(IdempotencyClientSettings settings) {
		this(settings, IdempotencyClientListener.NONE);
	}

	/**
	 * Creates an interceptor that reports its attempts and retries.
	 * @param settings what it does
	 * @param listener told of attempts and retries
	 */
	public IdempotencyClientInterceptor(IdempotencyClientSettings settings, IdempotencyClientListener listener) {
		this(settings, listener, new Backoff(settings));
	}

	IdempotencyClientInterceptor(IdempotencyClientSettings settings, IdempotencyClientListener listener,
			Backoff backoff) {
		this.policy = new KeyedCallPolicy(settings, listener, backoff);
	}

	/**
	 * The clock that {@code Retry-After} dates are read against.
	 * @param clock the clock
	 */
	void setClock(Clock clock) {
		this.policy.setClock(clock);
	}

	/**
	 * What this interceptor does.
	 * @return the settings
	 */
	public IdempotencyClientSettings getSettings() {
		return this.policy.settings();
	}

	/**
	 * First among ordered interceptors (a {@code RestTemplate} sorts its interceptors),
	 * so that the others run on every attempt.
	 * @return {@link Ordered#HIGHEST_PRECEDENCE}
	 */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		Map<String, Object> attributes = request.getAttributes();
		if (attributes.putIfAbsent(ACTIVE_ATTRIBUTE, Boolean.TRUE) != null) {
			// an idempo interceptor further out already keys and retries this request: a
			// second one (added by hand besides Boot's) must not multiply the attempts
			return execution.execute(request, body);
		}
		try {
			return keyedAttempts(request, body, execution);
		}
		finally {
			attributes.remove(ACTIVE_ATTRIBUTE);
		}
	}

	private ClientHttpResponse keyedAttempts(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		HttpRequest keyed = withKey(request);
		boolean singleAttempt = Boolean.TRUE.equals(request.getAttributes().get(SINGLE_ATTEMPT_ATTRIBUTE));
		int maxAttempts = this.policy.maxAttempts(request.getMethod(), keyed.getHeaders(), singleAttempt);
		return new Attempts(keyed, body, execution, maxAttempts).run();
	}

	/**
	 * The request with a key added if it needs one, or the request itself.
	 */
	private HttpRequest withKey(HttpRequest request) {
		String key = this.policy.keyFor(request.getMethod(), request.getURI(), request.getHeaders(),
				CurrentIdempotentCall.current());
		if (key == null) {
			return request;
		}
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(request.getHeaders());
		headers.set(this.policy.keyHeader(), key);
		return new HttpRequestWrapper(request) {

			@Override
			public HttpHeaders getHeaders() {
				return headers;
			}

		};
	}

	/**
	 * The request with headers of its own, so that what the interceptors behind this one
	 * add to one attempt is not sent again by the next one.
	 */
	private static HttpRequest freshCopy(HttpRequest request) {
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(request.getHeaders());
		return new HttpRequestWrapper(request) {

			@Override
			public HttpHeaders getHeaders() {
				return headers;
			}

		};
	}

	/**
	 * The attempts of one call. It is the {@link Retryable} that the
	 * {@link RetryTemplate} runs, the {@link RetryPolicy} that says which failures are
	 * retried, and the {@link BackOff} that says how long to wait before each retry: a
	 * wait depends on the answer just discarded ({@code Retry-After}), which only the
	 * call knows.
	 */
	private final class Attempts
			implements Retryable<ClientHttpResponse>, RetryPolicy, BackOff, BackOffExecution, RetryListener {

		private final HttpRequest request;

		private final byte[] body;

		private final ClientHttpRequestExecution execution;

		private final int maxAttempts;

		private final String method;

		private int attempts;

		private @Nullable RetryReason lastReason;

		private @Nullable Duration lastRetryAfter;

		private boolean interrupted;

		Attempts(HttpRequest request, byte[] body, ClientHttpRequestExecution execution, int maxAttempts) {
			this.request = request;
			this.body = body;
			this.execution = execution;
			this.maxAttempts = maxAttempts;
			this.method = KeyedCallPolicy.methodTag(request.getMethod());
		}

		ClientHttpResponse run() throws IOException {
			if (this.maxAttempts == 1) {
				return execute();
			}
			RetryTemplate template = new RetryTemplate(this);
			template.setRetryListener(this);
			try {
				return template.execute(this);
			}
			catch (RetryException ex) {
				Throwable last = ex.getCause();
				// an answer already closed, left over when the thread was interrupted
				// after it
				if (this.interrupted || last instanceof RetriedAnswer) {
					InterruptedIOException interruption = new InterruptedIOException("Interrupted while waiting to "
							+ "retry " + this.request.getMethod() + " " + this.request.getURI());
					interruption.initCause(last);
					throw interruption;
				}
				if (last instanceof IOException failure) {
					throw failure;
				}
				if (last instanceof RuntimeException failure) {
					throw failure;
				}
				if (last instanceof Error error) {
					throw error;
				}
				throw new IOException(last);
			}
		}

		@Override
		public ClientHttpResponse execute() throws IOException {
			int attempt = ++this.attempts;
			this.lastReason = null;
			this.lastRetryAfter = null;
			ClientHttpResponse response;
			int status;
			try {
				response = this.execution.execute(freshCopy(this.request), this.body);
				try {
					status = response.getStatusCode().value();
				}
				catch (IOException | RuntimeException ex) {
					// never handed to the caller: its connection must go back to the pool
					response.close();
					throw ex;
				}
			}
			catch (IOException ex) {
				IdempotencyClientInterceptor.this.policy.attempted(this.method, AttemptOutcome.IO_ERROR);
				this.lastReason = RetryReason.of(ex);
				throw ex;
			}
			IdempotencyClientInterceptor.this.policy.attempted(this.method, AttemptOutcome.of(status));
			RetryReason reason = RetryReason.of(status);
			// an interrupted thread gets the answer it has rather than a wait and no
			// answer
			if (reason == null || attempt >= this.maxAttempts || Thread.currentThread().isInterrupted()) {
				return response;
			}
			try {
				this.lastRetryAfter = IdempotencyClientInterceptor.this.policy
					.retryAfter(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER));
			}
			finally {
				response.close();
			}
			this.lastReason = reason;
			throw new RetriedAnswer(status);
		}

		@Override
		public String getName() {
			return this.request.getMethod() + " " + this.request.getURI();
		}

		@Override
		public boolean shouldRetry(Throwable failure) {
			return this.lastReason != null && !Thread.currentThread().isInterrupted();
		}

		@Override
		public BackOff getBackOff() {
			return this;
		}

		@Override
		public BackOffExecution start() {
			return this;
		}

		@Override
		public long nextBackOff() {
			RetryReason reason = this.lastReason;
			if (this.attempts >= this.maxAttempts || reason == null) {
				return BackOffExecution.STOP;
			}
			KeyedCallPolicy policy = IdempotencyClientInterceptor.this.policy;
			Duration wait = policy.waitBefore(this.attempts - 1, this.lastRetryAfter);
			policy.retrying(this.method, reason);
			return wait.toMillis();
		}

		@Override
		public void onRetryPolicyInterruption(RetryPolicy retryPolicy, Retryable<?> retryable,
				RetryException exception) {
			this.interrupted = true;
		}

	}

	/**
	 * An answer that is retried, already closed: the {@link RetryTemplate} retries what
	 * throws.
	 */
	private static final class RetriedAnswer extends RuntimeException {

		RetriedAnswer(int status) {
			super("Answered " + status, null, false, false);
		}

	}

}
