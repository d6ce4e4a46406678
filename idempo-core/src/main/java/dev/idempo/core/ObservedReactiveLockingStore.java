package dev.idempo.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import dev.idempo.core.IdempotencyListener.StoreOperation;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;

/**
 * Times every operation of a {@link ReactiveLockingStore} and reports it to a listener,
 * as {@link ObservedLockingStore} does for a blocking store (the same operations, the
 * same outcomes), and observes it as {@value ObservedLockingStore#OBSERVATION} when given
 * an {@link ObservationRegistry}, under the observation in the subscriber's context if
 * any.
 * <p>
 * An operation is timed from its subscription to its answer, and reported before the
 * answer goes on to the subscriber: a value or an empty completion is a success, an error
 * a failure; an operation whose subscriber cancels it first is not reported (its
 * observation is stopped).
 *
 * @author idempo
 */
public final class ObservedReactiveLockingStore implements ReactiveLockingStore {

	private final ReactiveLockingStore delegate;

	private final IdempotencyListener listener;

	private final String name;

	private final ObservationRegistry observationRegistry;

	/**
	 * Wraps a store, without observations.
	 * @param delegate the store
	 * @param listener the listener to report to
	 */
	public ObservedReactiveLockingStore(ReactiveLockingStore delegate, IdempotencyListener listener) {
		this(delegate, listener, ObservationRegistry.NOOP);
	}

	/**
	 * Wraps a store.
	 * @param delegate the store
	 * @param listener the listener to report to
	 * @param observationRegistry where each operation is observed;
	 * {@link ObservationRegistry#NOOP} for none
	 */
	public ObservedReactiveLockingStore(ReactiveLockingStore delegate, IdempotencyListener listener,
			ObservationRegistry observationRegistry) {
		this.delegate = delegate;
		this.listener = SafeIdempotencyListener.of(listener);
		this.name = delegate.name();
		this.observationRegistry = observationRegistry;
	}

	/**
	 * The store this one observes.
	 * @return the delegate
	 */
	public ReactiveLockingStore delegate() {
		return this.delegate;
	}

	@Override
	public Mono<ClaimResult> claim(String key, Duration lockTtl) {
		return observe(StoreOperation.CLAIM, this.delegate.claim(key, lockTtl));
	}

	@Override
	public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
		return observe(StoreOperation.COMPLETE, this.delegate.complete(lease, record, ttl));
	}

	@Override
	public Mono<Boolean> release(Lease lease) {
		return observe(StoreOperation.RELEASE, this.delegate.release(lease));
	}

	@Override
	public Mono<Boolean> renew(Lease lease, Duration lockTtl) {
		return observe(StoreOperation.RENEW, this.delegate.renew(lease, lockTtl));
	}

	@Override
	public boolean leaseExpires() {
		return this.delegate.leaseExpires();
	}

	@Override
	public String name() {
		return this.name;
	}

	/**
	 * Reports the operation before its answer goes on, so that whoever received the
	 * answer finds the operation reported.
	 */
	private <T> Mono<T> observe(StoreOperation operation, Mono<T> call) {
		return Mono.deferContextual((context) -> {
			Observation observation = start(operation, context.getOrDefault(ObservationThreadLocalAccessor.KEY, null));
			long start = System.nanoTime();
			AtomicBoolean ended = new AtomicBoolean();
			return call.doOnSuccess((answer) -> end(operation, start, ended, observation, null))
				.doOnError((ex) -> end(operation, start, ended, observation, ex))
				.doOnCancel(() -> {
					if (ended.compareAndSet(false, true)) {
						observation.stop();
					}
				});
		});
	}

	private void end(StoreOperation operation, long start, AtomicBoolean ended, Observation observation,
			@Nullable Throwable failure) {
		if (!ended.compareAndSet(false, true)) {
			return;
		}
		this.listener.onStoreOperation(this.name, operation, System.nanoTime() - start, failure == null);
		if (failure != null) {
			observation.error(failure);
		}
		observation.stop();
	}

	private Observation start(StoreOperation operation, @Nullable Observation parent) {
		if (this.observationRegistry.isNoop()) {
			return Observation.NOOP;
		}
		return Observation.createNotStarted(ObservedLockingStore.OBSERVATION, this.observationRegistry)
			.contextualName("idempo " + operation.tag())
			.lowCardinalityKeyValue("store", this.name)
			.lowCardinalityKeyValue("operation", operation.tag())
			.parentObservation(parent)
			.start();
	}

}
