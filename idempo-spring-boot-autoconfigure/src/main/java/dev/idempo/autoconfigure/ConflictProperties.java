package dev.idempo.autoconfigure;

import java.time.Duration;

import org.springframework.validation.Errors;

/**
 * What a duplicate gets while the first request with its key still runs.
 *
 * @author idempo
 */
public class ConflictProperties {

	/**
	 * Retry-After sent with 409, rounded up to whole seconds. Not negative.
	 */
	private Duration retryAfter = Duration.ofSeconds(1);

	/**
	 * How long a duplicate waits for the first request to finish before getting 409. When
	 * it finishes in time, the duplicate gets its response replayed. Zero answers 409 at
	 * once; not negative. A waiting duplicate holds a request thread.
	 */
	private Duration waitTimeout = Duration.ZERO;

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	public void setRetryAfter(Duration retryAfter) {
		this.retryAfter = retryAfter;
	}

	public Duration getWaitTimeout() {
		return this.waitTimeout;
	}

	public void setWaitTimeout(Duration waitTimeout) {
		this.waitTimeout = waitTimeout;
	}

	void validate(Errors errors) {
		IdempotencyProperties.rejectNegative(errors, "conflict.retryAfter", "idempo.conflict.retry-after",
				this.retryAfter);
		IdempotencyProperties.rejectNegative(errors, "conflict.waitTimeout", "idempo.conflict.wait-timeout",
				this.waitTimeout);
	}

}
