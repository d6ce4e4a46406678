package dev.idempo.client;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.client.IdempotencyClientListener.AttemptOutcome;
import dev.idempo.core.CurrentIdempotentCall;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;

/**
 * What idempo's clients decide about a call, whatever carries it: the blocking
 * {@link IdempotencyClientInterceptor} and the non-blocking
 * {@link IdempotencyExchangeFilterFunction} ask this, so that both key, retry, wait and
 * count alike. Which requests get a key and which key, how many attempts a request may
 * have, how long to wait before a retry, and the listener's events (a listener that
 * throws is logged, never passed on). It performs no I/O and never waits.
 *
 * @author idempo
 */
final class KeyedCallPolicy {

	/** The alias of the key header that servers commonly accept too. */
	static final String KEY_HEADER_ALIAS = "X-Idempotency-Key";

	private static final Set<HttpMethod> IDEMPOTENT_METHODS = Set.of(HttpMethod.GET, HttpMethod.HEAD,
			HttpMethod.OPTIONS, HttpMethod.TRACE, HttpMethod.PUT, HttpMethod.DELETE);

	private static final Set<HttpMethod> STANDARD_METHODS = Set.of(HttpMethod.values());

	/**
	 * Netty's timeouts, which are no {@link IOException}; matched by name, Netty is
	 * optional.
	 */
	private static final String NETTY_TIMEOUT = "io.netty.handler.timeout.TimeoutException";

	private static final Log logger = LogFactory.getLog(KeyedCallPolicy.class);

	private static final Base64.Encoder KEY_ENCODING = Base64.getUrlEncoder().withoutPadding();

	private final IdempotencyClientSettings settings;

	private final IdempotencyClientListener listener;

	private final Backoff backoff;

	private final SecureRandom random = new SecureRandom();

	private volatile Clock clock = Clock.systemUTC();

	KeyedCallPolicy(IdempotencyClientSettings settings, IdempotencyClientListener listener, Backoff backoff) {
		this.settings = settings;
		this.listener = listener;
		this.backoff = backoff;
	}

	IdempotencyClientSettings settings() {
		return this.settings;
	}

	/**
	 * The clock that {@code Retry-After} dates are read against.
	 * @param clock the clock
	 */
	void setClock(Clock clock) {
		this.clock = clock;
	}

	/**
	 * The key a request is to be sent with, when it needs one: its method is one of the
	 * keyed methods and it carries no key of its own.
	 * @param method the request's method
	 * @param uri the request's URI
	 * @param headers the caller's headers
	 * @param call the idempotent execution the call is made in, if any; a key derived
	 * from it (taking its next call ordinal) when derived keys are on
	 * @return the value of the key header (a Structured Fields string), or {@code null}
	 * if the request is sent as it is
	 */
	@Nullable String keyFor(HttpMethod method, URI uri, HttpHeaders headers, @Nullable CurrentIdempotentCall call) {
		if (!this.settings.keyedMethods().contains(method) || hasKey(headers)) {
			return null;
		}
		String key = (call != null && this.settings.derivedKeys())
				? derivedKey(call.identity(), method.name(), uri.toString(), call.nextCallOrdinal()) : randomKey();
		return "\"" + key + "\"";
	}

	/**
	 * A fresh key of 128 random bits. {@code SecureRandom} reads {@code /dev/urandom},
	 * which never waits: {@link ClientBlockHoundIntegration} allows it on non-blocking
	 * threads.
	 */
	private String randomKey() {
		byte[] bytes = new byte[16];
		this.random.nextBytes(bytes);
		return KEY_ENCODING.encodeToString(bytes);
	}

	/**
	 * The header that carries the key.
	 * @return its name
	 */
	String keyHeader() {
		return this.settings.keyHeader();
	}

	/**
	 * How many attempts a request may have: all the settings allow if it carries a key
	 * (its own or the one it was given) or its method is idempotent in HTTP, else one.
	 * @param method the request's method
	 * @param headers the headers it is sent with, its key included
	 * @param singleAttempt whether the caller limited it to one attempt
	 * @return the attempts in all
	 */
	int maxAttempts(HttpMethod method, HttpHeaders headers, boolean singleAttempt) {
		boolean repeatable = hasKey(headers) || IDEMPOTENT_METHODS.contains(method);
		return (repeatable && !singleAttempt) ? this.settings.maxAttempts() : 1;
	}

	private boolean hasKey(HttpHeaders headers) {
		return headers.containsHeader(this.settings.keyHeader()) || headers.containsHeader(KEY_HEADER_ALIAS);
	}

	/**
	 * How long the discarded answer asks to wait before the next attempt.
	 * @param header its {@code Retry-After}, {@code null} if it has none
	 * @return the wait, {@code null} if it asks none
	 */
	@Nullable Duration retryAfter(@Nullable String header) {
		return RetryAfter.parse(header, this.clock.instant());
	}

	/**
	 * The wait before a retry: what the discarded answer asked, cut to the longest
	 * honoured, or else the backoff.
	 * @param retry 0 before the first retry, 1 before the second, ...
	 * @param retryAfter what the answer asked, {@code null} for an I/O failure or an
	 * answer without {@code Retry-After}
	 * @return the wait
	 */
	Duration waitBefore(int retry, @Nullable Duration retryAfter) {
		if (retryAfter == null) {
			return this.backoff.delay(retry);
		}
		Duration max = this.settings.maxRetryAfter();
		return (retryAfter.compareTo(max) <= 0) ? retryAfter : max;
	}

	/**
	 * The {@code method} tag of a request's events.
	 * @param method the request's method
	 * @return its name, {@code OTHER} for a non-standard one
	 */
	static String methodTag(HttpMethod method) {
		return STANDARD_METHODS.contains(method) ? method.name() : "OTHER";
	}

	void attempted(String method, AttemptOutcome outcome) {
		try {
			this.listener.onAttempt(method, outcome);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency client listener failed", ex);
		}
	}

	void retrying(String method, RetryReason reason) {
		try {
			this.listener.onRetry(method, reason);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency client listener failed", ex);
		}
	}

	/**
	 * Whether a failure of a non-blocking client's attempt is an I/O failure: an
	 * {@link IOException} or a timeout in its causes ({@code WebClient} wraps them in a
	 * {@code WebClientRequestException}).
	 * @param failure what the attempt failed with
	 * @return whether it got no answer for an I/O reason
	 */
	static boolean isIoFailure(Throwable failure) {
		return ioCause(failure) != null || isTimeout(failure);
	}

	/**
	 * The reason to retry after a failure of a non-blocking client's attempt: that of the
	 * {@link IOException} in its causes ({@link RetryReason#of(IOException)}), or a
	 * timeout.
	 * @param failure what the attempt failed with
	 * @return the reason, {@code null} if the failure is final
	 */
	static @Nullable RetryReason reasonFor(Throwable failure) {
		IOException io = ioCause(failure);
		if (io != null) {
			return RetryReason.of(io);
		}
		return isTimeout(failure) ? RetryReason.TIMEOUT : null;
	}

	private static @Nullable IOException ioCause(Throwable failure) {
		Throwable cause = failure;
		// bounded: a cause chain may be a cycle
		for (int depth = 0; cause != null && depth < 32; depth++, cause = cause.getCause()) {
			if (cause instanceof IOException io) {
				return io;
			}
		}
		return null;
	}

	private static boolean isTimeout(Throwable failure) {
		Throwable cause = failure;
		for (int depth = 0; cause != null && depth < 32; depth++, cause = cause.getCause()) {
			if (cause instanceof TimeoutException) {
				return true;
			}
			for (Class<?> type = cause.getClass(); type != null; type = type.getSuperclass()) {
				if (NETTY_TIMEOUT.equals(type.getName())) {
					return true;
				}
			}
		}
		return false;
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

}
