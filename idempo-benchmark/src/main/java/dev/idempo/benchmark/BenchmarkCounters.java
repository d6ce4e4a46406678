package dev.idempo.benchmark;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempo.core.IdempotencyListener;

import org.springframework.stereotype.Component;

/**
 * Handler executions, requests in progress, and what idempo reports through its
 * {@link IdempotencyListener}: request and response outcomes and failed store operations
 * (a {@code complete} that threw, including one that timed out, is counted under
 * {@code store.failed.complete}).
 *
 * @author idempo
 */
@Component
class BenchmarkCounters implements IdempotencyListener {

	private final Map<Handler, AtomicLong> executions = new EnumMap<>(Handler.class);

	private final Map<RequestOutcome, AtomicLong> requests = new EnumMap<>(RequestOutcome.class);

	private final Map<ResponseOutcome, AtomicLong> responses = new EnumMap<>(ResponseOutcome.class);

	private final Map<StoreOperation, AtomicLong> storeOperations = new EnumMap<>(StoreOperation.class);

	private final Map<StoreOperation, AtomicLong> failedStoreOperations = new EnumMap<>(StoreOperation.class);

	private final AtomicInteger inFlight = new AtomicInteger();

	BenchmarkCounters() {
		for (Handler handler : Handler.values()) {
			this.executions.put(handler, new AtomicLong());
		}
		for (RequestOutcome outcome : RequestOutcome.values()) {
			this.requests.put(outcome, new AtomicLong());
		}
		for (ResponseOutcome outcome : ResponseOutcome.values()) {
			this.responses.put(outcome, new AtomicLong());
		}
		for (StoreOperation operation : StoreOperation.values()) {
			this.storeOperations.put(operation, new AtomicLong());
			this.failedStoreOperations.put(operation, new AtomicLong());
		}
	}

	void executed(Handler handler) {
		this.executions.get(handler).incrementAndGet();
	}

	AtomicInteger inFlight() {
		return this.inFlight;
	}

	@Override
	public void onRequest(RequestOutcome outcome) {
		this.requests.get(outcome).incrementAndGet();
	}

	@Override
	public void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
		this.responses.get(outcome).incrementAndGet();
	}

	@Override
	public void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
		this.storeOperations.get(operation).incrementAndGet();
		if (!success) {
			this.failedStoreOperations.get(operation).incrementAndGet();
		}
	}

	/**
	 * Sets every counter to zero (requests in progress are left alone).
	 */
	void reset() {
		this.executions.values().forEach((counter) -> counter.set(0));
		this.requests.values().forEach((counter) -> counter.set(0));
		this.responses.values().forEach((counter) -> counter.set(0));
		this.storeOperations.values().forEach((counter) -> counter.set(0));
		this.failedStoreOperations.values().forEach((counter) -> counter.set(0));
	}

	/**
	 * The counters as {@code name=value} lines, easy to read from a shell script.
	 * @return the report
	 */
	String report() {
		StringBuilder report = new StringBuilder();
		report.append("inflight=").append(this.inFlight.get()).append('\n');
		this.executions.forEach((handler, count) -> line(report, "executed." + handler.tag, count));
		this.requests.forEach((outcome, count) -> line(report, "request." + outcome.tag(), count));
		this.responses.forEach((outcome, count) -> line(report, "response." + outcome.tag(), count));
		this.storeOperations.forEach((operation, count) -> line(report, "store." + operation.tag(), count));
		this.failedStoreOperations
			.forEach((operation, count) -> line(report, "store.failed." + operation.tag(), count));
		return report.toString();
	}

	private static void line(StringBuilder report, String name, AtomicLong count) {
		report.append(name).append('=').append(count.get()).append('\n');
	}

	/**
	 * The measured handlers.
	 */
	enum Handler {

		PLAIN("plain"), IDEM("idem"), PAY_PLAIN("pay-plain"), PAY_IDEM("pay-idem"), PAY_TX("pay-tx"),
		SLOW_IDEM("slow-idem");

		private final String tag;

		Handler(String tag) {
			this.tag = tag;
		}

	}

}
