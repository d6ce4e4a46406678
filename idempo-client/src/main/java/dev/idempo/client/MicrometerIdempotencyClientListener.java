package dev.idempo.client;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts the client's attempts and retries in Micrometer: {@value #ATTEMPTS} by
 * {@code method} and {@code outcome}, {@value #RETRIES} by {@code method} and
 * {@code reason}. Every tag has a closed set of values.
 *
 * @author idempo
 */
public class MicrometerIdempotencyClientListener implements IdempotencyClientListener {

	/** The counter of attempts. */
	public static final String ATTEMPTS = "idempo.client.attempts";

	/** The counter of retries. */
	public static final String RETRIES = "idempo.client.retries";

	private final MeterRegistry registry;

	/**
	 * Creates a listener.
	 * @param registry where the counters go
	 */
	public MicrometerIdempotencyClientListener(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void onAttempt(String method, AttemptOutcome outcome) {
		Counter.builder(ATTEMPTS)
			.description("Attempts of outbound calls through idempo's client interceptor, by what each got")
			.tag("method", method)
			.tag("outcome", outcome.tag())
			.register(this.registry)
			.increment();
	}

	@Override
	public void onRetry(String method, RetryReason reason) {
		Counter.builder(RETRIES)
			.description("Retries of outbound calls through idempo's client interceptor, by the reason")
			.tag("method", method)
			.tag("reason", reason.tag())
			.register(this.registry)
			.increment();
	}

}
