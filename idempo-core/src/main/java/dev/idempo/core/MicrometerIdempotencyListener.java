package dev.idempo.core;

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
 * <li>{@code idempo.requests} (counter), tags {@code source} ({@code web},
 * {@code method}, {@code template}), {@code outcome}</li>
 * <li>{@code idempo.responses} (counter), tags {@code source}, {@code outcome},
 * {@code reason}</li>
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

	private static final int SOURCES = Source.values().length;

	/** Indexed by source and outcome. */
	private final AtomicReferenceArray<Counter> requests = new AtomicReferenceArray<>(
			SOURCES * RequestOutcome.values().length);

	/** Indexed by source, outcome and reason. */
	private final AtomicReferenceArray<Counter> responses = new AtomicReferenceArray<>(
			SOURCES * ResponseOutcome.values().length * REASONS);

	/** Per store name, indexed by operation and result. */
	private final Map<String, AtomicReferenceArray<Timer>> timers = new ConcurrentHashMap<>();

	/**
	 * Creates a listener and registers its web request counters.
	 * @param registry the registry
	 */
	public MicrometerIdempotencyListener(MeterRegistry registry) {
		this.registry = registry;
		for (RequestOutcome outcome : RequestOutcome.values()) {
			requestCounter(Source.WEB, outcome);
		}
	}

	@Override
	public void onRequest(RequestOutcome outcome) {
		onRequest(Source.WEB, outcome);
	}

	@Override
	public void onRequest(Source source, RequestOutcome outcome) {
		requestCounter(source, outcome).increment();
	}

	private Counter requestCounter(Source source, RequestOutcome outcome) {
		int index = source.ordinal() * RequestOutcome.values().length + outcome.ordinal();
		Counter counter = this.requests.get(index);
		if (counter == null) {
			// registering twice returns the same meter: a race here is harmless
			counter = Counter.builder("idempo.requests")
				.description("Protected calls (requests to @Idempotent handlers that carried or required a key, "
						+ "@Idempotent method and template calls), by source and outcome")
				.tag("source", source.tag())
				.tag("outcome", outcome.tag())
				.register(this.registry);
			this.requests.set(index, counter);
		}
		return counter;
	}

	@Override
	public void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
		onResponse(Source.WEB, outcome, reason);
	}

	@Override
	public void onResponse(Source source, ResponseOutcome outcome, NotStoredReason reason) {
		int index = (source.ordinal() * ResponseOutcome.values().length + outcome.ordinal()) * REASONS
				+ reason.ordinal();
		Counter counter = this.responses.get(index);
		if (counter == null) {
			counter = Counter.builder("idempo.responses")
				.description(
						"Results of protected calls whose work ran under a claimed key, by what happened to " + "them")
				.tag("source", source.tag())
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
