package dev.idempo.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * The waits between attempts when the server names none: exponential, capped, with jitter
 * so that clients cut off together do not come back together.
 *
 * @author idempo
 */
final class Backoff {

	private final long initialNanos;

	private final long maxNanos;

	private final double multiplier;

	private final double jitter;

	private final DoubleSupplier random;

	Backoff(IdempotencyClientSettings settings) {
		this(settings, () -> ThreadLocalRandom.current().nextDouble());
	}

	/**
	 * @param random values in {@code [0, 1)}
	 */
	Backoff(IdempotencyClientSettings settings, DoubleSupplier random) {
		this.initialNanos = settings.initialBackoff().toNanos();
		this.maxNanos = settings.maxBackoff().toNanos();
		this.multiplier = settings.backoffMultiplier();
		this.jitter = settings.backoffJitter();
		this.random = random;
	}

	/**
	 * The wait before a retry: {@code min(max, initial * multiplier^retry)}, of which the
	 * jitter's share is cut by a random amount.
	 * @param retry 0 before the first retry, 1 before the second, ...
	 * @return the wait
	 */
	Duration delay(int retry) {
		double full = this.initialNanos * Math.pow(this.multiplier, retry);
		double capped = Math.min(full, this.maxNanos);
		double jittered = capped * (1.0 - this.jitter * this.random.getAsDouble());
		return Duration.ofNanos((long) jittered);
	}

}
