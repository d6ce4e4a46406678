package dev.idempo.core;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

import org.springframework.util.Assert;

/**
 * The settings of the request flow, usually bound from {@code idempo.*} properties.
 *
 * @param keyHeader the header that carries the key
 * @param keyHeaderAliases further headers accepted as the key header
 * @param keyRequired whether every protected handler requires a key
 * @param responseTtl how long responses are kept unless the annotation says otherwise
 * @param lockTtl the lease length on stores whose claims expire
 * @param maxResponseSize the largest response body stored, in bytes
 * @param maxRequestSize the largest request body read to fingerprint it, in bytes
 * @param excludedHeaders response headers never stored nor replayed (case-insensitive)
 * @param conflictRetryAfter the {@code Retry-After} of a 409
 * @param conflictWaitTimeout how long a duplicate waits for the first request before a
 * 409; zero answers 409 at once
 * @param failOpen whether to run the handler unprotected when the store fails
 * @param storeFailureRetryAfter the {@code Retry-After} of a 503
 * @param replayedHeader the header added to a replayed response
 * @author idempo
 */
public record IdempotencySettings(String keyHeader, List<String> keyHeaderAliases, boolean keyRequired,
		Duration responseTtl, Duration lockTtl, long maxResponseSize, long maxRequestSize, Set<String> excludedHeaders,
		Duration conflictRetryAfter, Duration conflictWaitTimeout, boolean failOpen, Duration storeFailureRetryAfter,
		String replayedHeader) {

	/** The header added to a replayed response by default. */
	public static final String DEFAULT_REPLAYED_HEADER = "Idempotent-Replayed";

	/** Headers that describe one transfer, not the response, and are never replayed. */
	public static final Set<String> ALWAYS_EXCLUDED_HEADERS = Set.of("content-length", "transfer-encoding",
			"connection");

	/** The default deny-list of replayed headers. */
	public static final List<String> DEFAULT_EXCLUDED_HEADERS = List.of("Set-Cookie", "Date", "Connection",
			"Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection", "TE", "Trailer",
			"Transfer-Encoding", "Upgrade", "Content-Length");

	/**
	 * The longest TTL of a response or result: 100 years, which every store can keep
	 * (MySQL's {@code DATETIME} ends in the year 9999, the JDBC store's clock arithmetic
	 * at 292 years).
	 */
	public static final Duration MAX_TTL = Duration.ofDays(36_500);

	public IdempotencySettings {
		Assert.hasText(keyHeader, "'keyHeader' must not be empty");
		Assert.hasText(replayedHeader, "'replayedHeader' must not be empty");
		Assert.isTrue(isValidTtl(responseTtl), "'responseTtl' must be positive and at most 36500d");
		Assert.isTrue(isPositive(lockTtl), "'lockTtl' must be positive");
		Assert.isTrue(maxResponseSize >= 0, "'maxResponseSize' must not be negative");
		Assert.isTrue(maxRequestSize >= 0, "'maxRequestSize' must not be negative");
		Assert.isTrue(!conflictRetryAfter.isNegative(), "'conflictRetryAfter' must not be negative");
		Assert.isTrue(!conflictWaitTimeout.isNegative(), "'conflictWaitTimeout' must not be negative");
		Assert.isTrue(!storeFailureRetryAfter.isNegative(), "'storeFailureRetryAfter' must not be negative");
		keyHeaderAliases = List.copyOf(keyHeaderAliases);
		Set<String> excluded = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
		excludedHeaders.forEach((name) -> excluded.add(name.trim().toLowerCase(Locale.ROOT)));
		excluded.addAll(ALWAYS_EXCLUDED_HEADERS);
		excludedHeaders = Set.copyOf(excluded);
	}

	/**
	 * Settings that add the default {@value #DEFAULT_REPLAYED_HEADER} header to replays.
	 * @param keyHeader the header that carries the key
	 * @param keyHeaderAliases further headers accepted as the key header
	 * @param keyRequired whether every protected handler requires a key
	 * @param responseTtl how long responses are kept unless the annotation says otherwise
	 * @param lockTtl the lease length on stores whose claims expire
	 * @param maxResponseSize the largest response body stored, in bytes
	 * @param maxRequestSize the largest request body read to fingerprint it, in bytes
	 * @param excludedHeaders response headers never stored nor replayed
	 * (case-insensitive)
	 * @param conflictRetryAfter the {@code Retry-After} of a 409
	 * @param conflictWaitTimeout how long a duplicate waits for the first request
	 * @param failOpen whether to run the handler unprotected when the store fails
	 * @param storeFailureRetryAfter the {@code Retry-After} of a 503
	 */
	public IdempotencySettings(String keyHeader, List<String> keyHeaderAliases, boolean keyRequired,
			Duration responseTtl, Duration lockTtl, long maxResponseSize, long maxRequestSize,
			Set<String> excludedHeaders, Duration conflictRetryAfter, Duration conflictWaitTimeout, boolean failOpen,
			Duration storeFailureRetryAfter) {
		this(keyHeader, keyHeaderAliases, keyRequired, responseTtl, lockTtl, maxResponseSize, maxRequestSize,
				excludedHeaders, conflictRetryAfter, conflictWaitTimeout, failOpen, storeFailureRetryAfter,
				DEFAULT_REPLAYED_HEADER);
	}

	/**
	 * Settings with every default, as documented for the {@code idempo.*} properties.
	 * @return the default settings
	 */
	public static IdempotencySettings defaults() {
		return new IdempotencySettings("Idempotency-Key", List.of("X-Idempotency-Key"), false, Duration.ofHours(24),
				Duration.ofSeconds(30), 1024 * 1024, 10 * 1024 * 1024, Set.copyOf(DEFAULT_EXCLUDED_HEADERS),
				Duration.ofSeconds(1), Duration.ZERO, false, Duration.ofSeconds(5));
	}

	/**
	 * Whether a response header is stored and replayed.
	 * @param name the header name
	 * @return {@code true} unless it is excluded
	 */
	public boolean isReplayable(String name) {
		return !this.excludedHeaders.contains(name.toLowerCase(Locale.ROOT));
	}

	/**
	 * Whether a duration can be a TTL: positive and at most {@link #MAX_TTL}.
	 * @param ttl the duration
	 * @return whether it is a valid TTL
	 */
	public static boolean isValidTtl(Duration ttl) {
		return isPositive(ttl) && ttl.compareTo(MAX_TTL) <= 0;
	}

	private static boolean isPositive(Duration duration) {
		return !duration.isNegative() && !duration.isZero();
	}

}
