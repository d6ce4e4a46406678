package dev.idempo.core;

import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import dev.idempo.core.IdempotencyListener.StoreOperation;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;

/**
 * Times every operation of a {@link LockingStore} and reports it to a listener, and
 * observes it (a span with Micrometer Tracing) when given an {@link ObservationRegistry}.
 *
 * @author idempo
 */
public final class ObservedLockingStore implements LockingStore {

	/** The name of the observation of a store operation. */
	public static final String OBSERVATION = "idempo.store";

	private final LockingStore delegate;

	private final IdempotencyListener listener;

	private final String name;

	private final ObservationRegistry observationRegistry;

	/**
	 * Wraps a store, without observations.
	 * @param delegate the store
	 * @param listener the listener to report to
	 */
	public ObservedLockingStore(LockingStore delegate, IdempotencyListener listener) {
		this(delegate, listener, ObservationRegistry.NOOP);
	}

	/**
	 * Wraps a store.
	 * @param delegate the store
	 * @param listener the listener to report to
	 * @param observationRegistry where each operation is observed as
	 * {@value #OBSERVATION} (a span with Micrometer Tracing), with the low-cardinality
	 * key values {@code store} and {@code operation}; {@link ObservationRegistry#NOOP}
	 * for none
	 */
	public ObservedLockingStore(LockingStore delegate, IdempotencyListener listener,
			ObservationRegistry observationRegistry) {
		this.delegate = delegate;
		this.listener = SafeIdempotencyListener.of(listener);
		this.name = delegate.name();
		this.observationRegistry = observationRegistry;
	}

	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		return observe(StoreOperation.CLAIM, () -> this.delegate.claim(key, lockTtl));
	}

	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		return observe(StoreOperation.COMPLETE, () -> this.delegate.complete(lease, record, ttl));
	}

	@Override
	public boolean release(Lease lease) {
		return observe(StoreOperation.RELEASE, () -> this.delegate.release(lease));
	}

	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		return observe(StoreOperation.RENEW, () -> this.delegate.renew(lease, lockTtl));
	}

	@Override
	public boolean leaseExpires() {
		return this.delegate.leaseExpires();
	}

	@Override
	public Map<String, Object> checkHealth() {
		return this.delegate.checkHealth();
	}

	@Override
	public String name() {
		return this.name;
	}

	private <T> T observe(StoreOperation operation, Supplier<T> call) {
		if (this.observationRegistry.isNoop()) {
			return timed(operation, call);
		}
		Observation observation = Observation.createNotStarted(OBSERVATION, this.observationRegistry)
			.contextualName("idempo " + operation.tag())
			.lowCardinalityKeyValue("store", this.name)
			.lowCardinalityKeyValue("operation", operation.tag());
		return observation.observe(() -> timed(operation, call));
	}

	private <T> T timed(StoreOperation operation, Supplier<T> call) {
		long start = System.nanoTime();
		boolean success = false;
		try {
			T result = call.get();
			success = true;
			return result;
		}
		finally {
			this.listener.onStoreOperation(this.name, operation, System.nanoTime() - start, success);
		}
	}

}
