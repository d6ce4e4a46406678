package dev.idempo.autoconfigure;

import java.time.Duration;

import dev.idempo.autoconfigure.IdempotencyProperties.StoreFailureMode;

import org.springframework.validation.Errors;

/**
 * What happens when the store cannot be reached.
 *
 * @author idempo
 */
public class StoreFailureProperties {

	/**
	 * Whether to refuse the request with 503 (fail-closed) or run the handler unprotected
	 * (fail-open).
	 */
	private StoreFailureMode mode = StoreFailureMode.FAIL_CLOSED;

	/**
	 * Retry-After sent with 503, rounded up to whole seconds. Not negative.
	 */
	private Duration retryAfter = Duration.ofSeconds(5);

	public StoreFailureMode getMode() {
		return this.mode;
	}

	public void setMode(StoreFailureMode mode) {
		this.mode = mode;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	public void setRetryAfter(Duration retryAfter) {
		this.retryAfter = retryAfter;
	}

	void validate(Errors errors) {
		IdempotencyProperties.rejectNegative(errors, "storeFailure.retryAfter", "idempo.store-failure.retry-after",
				this.retryAfter);
	}

}
