package dev.idempo.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
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
import org.springframework.http.HttpMethod;
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
 * {@link RetryTemplate}.
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

	/** The alias of the key header that servers commonly accept too. */
	private static final String KEY_HEADER_ALIAS = "X-Idempotency-Key";

	private static final Set<HttpMethod> IDEMPOTENT_METHODS = Set.of(HttpMethod.GET, HttpMethod.HEAD,
			HttpMethod.OPTIONS, HttpMethod.TRACE, HttpMethod.PUT, HttpMethod.DELETE);

	private static final Set<HttpMethod> STANDARD_METHODS = Set.of(HttpMethod.values());

	private static final Log logger = LogFactory.getLog(IdempotencyClientInterceptor.class);

	private static final Base64.Encoder KEY_ENCODING = Base64.getUrlEncoder().withoutPadding();

	private final IdempotencyClientSettings settings;

	private final IdempotencyClientListener listener;

	private final SecureRandom random = new SecureRandom();

	private final Backoff backoff;

	private Clock clock = Clock.systemUTC();

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
		this.settings = settings;
		this.listener = listener;
		this.backoff = backoff;
	}

	/**
	 * The clock that {@code Retry-After} dates are read against.
	 * @param clock the clock
	 */
	void setClock(Clock clock) {
		this.clock = clock;
	}

	/**
	 * What this interceptor does.
	 * @return the settings
	 */
	public IdempotencyClientSettings getSettings() {
		return this.settings;
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
		boolean retryable = this.settings.maxAttempts() > 1
				&& !Boolean.TRUE.equals(request.getAttributes().get(SINGLE_ATTEMPT_ATTRIBUTE)) && (keyed != request
						|| hasKey(request.getHeaders()) || IDEMPOTENT_METHODS.contains(request.getMethod()));
		Attempts attempts = new Attempts(keyed, body, execution, retryable ? this.settings.maxAttempts() : 1);
		return attempts.run();
	}

	/**
	 * The request with a key added if it needs one, or the request itself.
	 */
	private HttpRequest withKey(HttpRequest request) {
		HttpMethod method = request.getMethod();
		if (!this.settings.keyedMethods().contains(method) || hasKey(request.getHeaders())) {
			return request;
		}
		String key = newKey(request);
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(request.getHeaders());
		headers.set(this.settings.keyHeader(), "\"" + key + "\"");
		return new HttpRequestWrapper(request) {

			@Override
			public HttpHeaders getHeaders() {
				return headers;
			}

		};
	}

	private boolean hasKey(HttpHeaders headers) {
		return headers.containsHeader(this.settings.keyHeader()) || headers.containsHeader(KEY_HEADER_ALIAS);
	}

	private String newKey(HttpRequest request) {
		CurrentIdempotentCall call = this.settings.derivedKeys() ? CurrentIdempotentCall.current() : null;
		if (call == null) {
			byte[] bytes = new byte[16];
			this.random.nextBytes(bytes);
			return KEY_ENCODING.encodeToString(bytes);
		}
		return derivedKey(call.identity(), request.getMethod().name(), request.getURI().toString(),
				call.nextCallOrdinal());
	}

	/**
	 * The key of the {@code ordinal}-th keyed call of an execution: a digest, so that
	 * neither the execution's identity nor anything of the call can be read from it.
	 */
	static String derivedKey(String identity, String method, String uri, int ordinal) {
		MessageDigest digest;
		try {
			digest = MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
		for (String field : new String[] { "idempo-derived-key-1", identity, method, uri, Integer.toString(ordinal) }) {
			byte[] bytes = field.getBytes(StandardCharsets.UTF_8);
			int length = bytes.length;
			digest.update(new byte[] { (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8),
					(byte) length });
			digest.update(bytes);
		}
		return KEY_ENCODING.encodeToString(digest.digest());
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

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private static String methodTag(HttpMethod method) {
		return STANDARD_METHODS.contains(method) ? method.name() : "OTHER";
	}

	private void attempted(String method, AttemptOutcome outcome) {
		try {
			this.listener.onAttempt(method, outcome);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency client listener failed", ex);
		}
	}

	private void retrying(String method, RetryReason reason) {
		try {
			this.listener.onRetry(method, reason);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency client listener failed", ex);
		}
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
			this.method = methodTag(request.getMethod());
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
				attempted(this.method, AttemptOutcome.IO_ERROR);
				this.lastReason = RetryReason.of(ex);
				throw ex;
			}
			attempted(this.method, AttemptOutcome.of(status));
			RetryReason reason = RetryReason.of(status);
			// an interrupted thread gets the answer it has rather than a wait and no
			// answer
			if (reason == null || attempt >= this.maxAttempts || Thread.currentThread().isInterrupted()) {
				return response;
			}
			try {
				this.lastRetryAfter = RetryAfter.parse(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER),
						IdempotencyClientInterceptor.this.clock.instant());
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
			Duration retryAfter = this.lastRetryAfter;
			Duration wait = (retryAfter != null)
					? min(retryAfter, IdempotencyClientInterceptor.this.settings.maxRetryAfter())
					: IdempotencyClientInterceptor.this.backoff.delay(this.attempts - 1);
			retrying(this.method, reason);
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
