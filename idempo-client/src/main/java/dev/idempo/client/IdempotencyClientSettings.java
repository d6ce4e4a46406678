package dev.idempo.client;

import java.time.Duration;
import java.util.Set;

import org.springframework.http.HttpMethod;
import org.springframework.util.Assert;

/**
 * What {@link IdempotencyClientInterceptor} does: which requests get keys, under which
 * header, and how it retries.
 *
 * @param keyedMethods the methods whose requests get a key when they have none (by
 * default POST and PATCH)
 * @param keyHeader the request header that carries the key
 * @param maxAttempts attempts in all, the first included; 1 never retries
 * @param initialBackoff the wait before the first retry when the answer gives no
 * {@code Retry-After}
 * @param maxBackoff the longest wait between attempts without {@code Retry-After}
 * @param backoffMultiplier what each wait is multiplied by for the next one, at least 1
 * @param backoffJitter the share of each wait that is random, from 0 (none) to 1 (the
 * wait is anywhere between zero and its full length)
 * @param maxRetryAfter the longest {@code Retry-After} waited for; a longer one is cut to
 * this
 * @param derivedKeys whether a call made while an idempotent execution runs on the thread
 * gets a key derived from that execution instead of a random one
 * @author idempo
 */
public record IdempotencyClientSettings(Set<HttpMethod> keyedMethods, String keyHeader, int maxAttempts,
		Duration initialBackoff, Duration maxBackoff, double backoffMultiplier, double backoffJitter,
		Duration maxRetryAfter, boolean derivedKeys) {

	/** The default header of the key. */
	public static final String DEFAULT_KEY_HEADER = "Idempotency-Key";

	/**
	 * Checks the settings.
	 * @throws IllegalArgumentException if one is out of range
	 */
	public IdempotencyClientSettings {
		keyedMethods = Set.copyOf(keyedMethods);
		Assert.isTrue(!keyHeader.isBlank(), "keyHeader must not be blank");
		Assert.isTrue(maxAttempts >= 1, "maxAttempts must be at least 1");
		Assert.isTrue(!initialBackoff.isNegative(), "initialBackoff must not be negative");
		Assert.isTrue(maxBackoff.compareTo(initialBackoff) >= 0, "maxBackoff must not be shorter than initialBackoff");
		Assert.isTrue(backoffMultiplier >= 1.0, "backoffMultiplier must be at least 1");
		Assert.isTrue(backoffJitter >= 0.0 && backoffJitter <= 1.0, "backoffJitter must be between 0 and 1");
		Assert.isTrue(!maxRetryAfter.isNegative(), "maxRetryAfter must not be negative");
	}

	/**
	 * The defaults, those of the {@code idempo.client.*} properties: keys for POST and
	 * PATCH in {@code Idempotency-Key}, 3 attempts, waits from 200 ms doubling up to 5 s
	 * with half of each random, {@code Retry-After} honoured up to 10 s, derived keys.
	 * @return the defaults
	 */
	public static IdempotencyClientSettings defaults() {
		return new IdempotencyClientSettings(Set.of(HttpMethod.POST, HttpMethod.PATCH), DEFAULT_KEY_HEADER, 3,
				Duration.ofMillis(200), Duration.ofSeconds(5), 2.0, 0.5, Duration.ofSeconds(10), true);
	}

	/**
	 * These settings with another number of attempts.
	 * @param maxAttempts attempts in all, at least 1
	 * @return the new settings
	 */
	public IdempotencyClientSettings withMaxAttempts(int maxAttempts) {
		return new IdempotencyClientSettings(this.keyedMethods, this.keyHeader, maxAttempts, this.initialBackoff,
				this.maxBackoff, this.backoffMultiplier, this.backoffJitter, this.maxRetryAfter, this.derivedKeys);
	}

	/**
	 * These settings with another backoff.
	 * @param initial the first wait
	 * @param max the longest wait
	 * @param multiplier the growth of each wait, at least 1
	 * @param jitter the random share of each wait, 0 to 1
	 * @return the new settings
	 */
	public IdempotencyClientSettings withBackoff(Duration initial, Duration max, double multiplier, double jitter) {
		return new IdempotencyClientSettings(this.keyedMethods, this.keyHeader, this.maxAttempts, initial, max,
				multiplier, jitter, this.maxRetryAfter, this.derivedKeys);
	}

	/**
	 * These settings with another longest {@code Retry-After}.
	 * @param maxRetryAfter the longest wait a server may ask for
	 * @return the new settings
	 */
	public IdempotencyClientSettings withMaxRetryAfter(Duration maxRetryAfter) {
		return new IdempotencyClientSettings(this.keyedMethods, this.keyHeader, this.maxAttempts, this.initialBackoff,
				this.maxBackoff, this.backoffMultiplier, this.backoffJitter, maxRetryAfter, this.derivedKeys);
	}

	/**
	 * These settings with derived keys on or off.
	 * @param derivedKeys whether calls made during an idempotent execution get derived
	 * keys
	 * @return the new settings
	 */
	public IdempotencyClientSettings withDerivedKeys(boolean derivedKeys) {
		return new IdempotencyClientSettings(this.keyedMethods, this.keyHeader, this.maxAttempts, this.initialBackoff,
				this.maxBackoff, this.backoffMultiplier, this.backoffJitter, this.maxRetryAfter, derivedKeys);
	}

}
