package dev.idempo.core;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

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
 * Meters are registered when first used and then looked up by array index: every
 * protected request records two or three events, and building a string key to find each
 * meter cost more than recording it.
 *
 * @author idempo
 */
public class MicrometerIdempotencyListener implements IdempotencyListener {

	private static final int REASONS = NotStoredReason.values().length;

	private static final int OPERATIONS = StoreOperation.values().length;

	private final MeterRegistry registry;

	private final Map<RequestOutcome, Counter> requests = new EnumMap<>(RequestOutcome.class);

	/** Indexed by outcome and reason. */
	private final AtomicReferenceArray<Counter> responses = new AtomicReferenceArray<>(
			ResponseOutcome.values().length * REASONS);

	/** Per store name, indexed by operation and result. */
	private final Map<String, AtomicReferenceArray<Timer>> timers = new ConcurrentHashMap<>();

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
		int index = outcome.ordinal() * REASONS + reason.ordinal();
		Counter counter = this.responses.get(index);
		if (counter == null) {
			// registering twice returns the same meter: a race here is harmless
			counter = Counter.builder("idempo.responses")
				.description("Responses of handlers that ran under a claimed key, by what happened to them")
				.tag("outcome", outcome.tag())
				.tag("reason", reason.tag())
				.register(this.registry);
			this.responses.set(index, counter);
		}
		counter.increment();
	}

	@Override
	public void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
		AtomicReferenceArray<Timer> storeTimers = this.timers.computeIfAbsent(store,
				(name) -> new AtomicReferenceArray<>(OPERATIONS * 2));
		int index = operation.ordinal() * 2 + (success ? 0 : 1);
		Timer timer = storeTimers.get(index);
		if (timer == null) {
			timer = Timer.builder("idempo.store.operations")
				.description("Latency of idempotency store operations")
				.tag("store", store)
				.tag("operation", operation.tag())
				.tag("result", success ? "success" : "error")
				.register(this.registry);
			storeTimers.set(index, timer);
		}
		timer.record(nanos, TimeUnit.NANOSECONDS);
	}

}
