package dev.idempo.core;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Publishes idempo's events as Micrometer meters. Tags are bounded enums and the store
 * name; the key never becomes a tag.
 * <ul>
 * <li>{@code idempo.requests} (counter), tag {@code outcome}</li>
 * <li>{@code idempo.responses} (counter), tags {@code outcome}, {@code reason}</li>
 * <li>{@code idempo.store.operations} (timer), tags {@code store}, {@code operation},
 * {@code result}</li>
 * </ul>
 *
 * @author idempo
 */
public class MicrometerIdempotencyListener implements IdempotencyListener {

	private final MeterRegistry registry;

	private final Map<RequestOutcome, Counter> requests = new EnumMap<>(RequestOutcome.class);

	private final Map<String, Counter> responses = new ConcurrentHashMap<>();

	private final Map<String, Timer> timers = new ConcurrentHashMap<>();

	/**
	 * Creates a listener and registers its request counters.
	 * @param registry the registry
	 */
	public MicrometerIdempotencyListener(MeterRegistry registry) {
		this.registry = registry;
		for (RequestOutcome outcome : RequestOutcome.values()) {
			this.requests.put(outcome,
					Counter.builder("idempo.requests")
						.description("Requests to @Idempotent handlers that carried or required a key, by outcome")
						.tag("outcome", outcome.tag())
						.register(registry));
		}
	}

	@Override
	public void onRequest(RequestOutcome outcome) {
		this.requests.get(outcome).increment();
	}

	@Override
	public void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
		this.responses
			.computeIfAbsent(outcome.tag() + '/' + reason.tag(),
					(id) -> Counter.builder("idempo.responses")
						.description("Responses of handlers that ran under a claimed key, by what happened to them")
						.tag("outcome", outcome.tag())
						.tag("reason", reason.tag())
						.register(this.registry))
			.increment();
	}

	@Override
	public void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
		String result = success ? "success" : "error";
		this.timers
			.computeIfAbsent(store + '/' + operation.tag() + '/' + result,
					(id) -> Timer.builder("idempo.store.operations")
						.description("Latency of idempotency store operations")
						.tag("store", store)
						.tag("operation", operation.tag())
						.tag("result", result)
						.register(this.registry))
			.record(nanos, TimeUnit.NANOSECONDS);
	}

}
