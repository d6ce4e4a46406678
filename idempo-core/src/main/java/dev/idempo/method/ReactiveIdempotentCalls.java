package dev.idempo.method;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.core.JacksonException;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;
import dev.idempo.core.CurrentIdempotentCall;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.RequestOutcome;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.StorageKeys;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;

import org.springframework.util.Assert;

/**
 * Runs idempotent calls whose result arrives later, a {@link Mono} or a
 * {@link CompletableFuture}, on a {@link ReactiveLockingStore}, with the semantics of
 * {@link IdempotentCalls}: the same records (a blocking and a reactive method of one
 * scope share them), outcomes and metrics.
 * <ul>
 * <li>A {@code Mono} is claimed when it is subscribed, and each subscription is a call of
 * its own. A {@code CompletableFuture} is claimed when the method is called.</li>
 * <li>A value (or a {@code Mono} completing empty) is stored, then handed on; an error
 * releases the key and is handed on unchanged; a cancelled call releases the key.</li>
 * <li>A completed record: its result in the same type, the method not called; another
 * call holding the key: {@link IdempotencyInProgressException}; another fingerprint:
 * {@link IdempotencyKeyReusedException}; all as errors of the {@code Mono} (or the
 * future), never thrown by the call itself.</li>
 * </ul>
 * The store's answers never run the work on a thread that must not block: the work is
 * called on the thread that delivers the claim's answer, which a non-blocking store keeps
 * non-blocking; a future's method, which may well block before it returns its future, is
 * called on {@link Schedulers#boundedElastic()}. Completes and releases, once sent, are
 * not cancelled with their call, so a cancelled subscriber never leaves a key claimed.
 * Transactional mode is not supported (the method is refused at start-up).
 *
 * @author idempo
 */
public final class ReactiveIdempotentCalls {

	private static final Log logger = LogFactory.getLog(ReactiveIdempotentCalls.class);

	private final ReactiveLockingStore store;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final JsonResults results;

	/**
	 * Creates the engine.
	 * @param store the store
	 * @param listener the listener for metrics
	 * @param settings the settings (lock TTL, fail-open)
	 * @param results writes and reads results, as for {@link IdempotentCalls}
	 */
	public ReactiveIdempotentCalls(ReactiveLockingStore store, IdempotencyListener listener,
			IdempotencySettings settings, JsonResults results) {
		Assert.notNull(store, "'store' must not be null");
		this.store = store;
		this.listener = listener;
		this.settings = settings;
		this.results = results;
	}

	/**
	 * A call whose result is a {@code Mono}: claimed at each subscription.
	 * @param call what is called (never transactional)
	 * @param work assembles the method's {@code Mono} (a {@code null} is an empty one);
	 * called only when the call runs
	 * @return the result, or the stored result of an earlier call with the key
	 */
	public Mono<Object> execute(IdempotentCalls.Call call, IdempotentCalls.Work work) {
		return Mono.defer(() -> {
			if (call.transactional()) {
				return Mono.error(new IllegalStateException("Reactive idempotent calls cannot be transactional"));
			}
			String storageKey = StorageKeys.of(call.scope(), call.key());
			return Mono.defer(() -> this.store.claim(storageKey, this.settings.lockTtl()))
				.switchIfEmpty(Mono.error(() -> new IllegalStateException(
						"The idempotency store " + this.store.name() + " answered a claim with nothing")))
				.onErrorMap((ex) -> new ClaimFailure(ex))
				.flatMap((claim) -> answer(call, storageKey, claim, work))
				.onErrorResume(ClaimFailure.class, (failure) -> storeFailed(call, storageKey, work, failure));
		});
	}

	/**
	 * A call whose result is a {@code CompletableFuture}: claimed now; the method is
	 * called on {@link Schedulers#boundedElastic()} once the key is held.
	 * @param call what is called (never transactional)
	 * @param work calls the method, which answers a {@code CompletionStage} (a
	 * {@code null} is an empty result)
	 * @return the result, or the stored result of an earlier call with the key;
	 * cancelling it releases the key
	 */
	public CompletableFuture<Object> executeFuture(IdempotentCalls.Call call, IdempotentCalls.Work work) {
		IdempotentCalls.Work assembled = () -> Mono.deferContextual((context) -> {
			Object stage;
			CurrentIdempotentCall current = context.getOrDefault(CurrentIdempotentCall.CONTEXT_KEY, null);
			try (CurrentIdempotentCall.Binding binding = (current != null) ? CurrentIdempotentCall.bind(current)
					: null) {
				stage = work.run();
			}
			catch (Throwable ex) {
				return Mono.error(ex);
			}
			return (stage != null) ? Mono.fromCompletionStage((CompletionStage<?>) stage) : Mono.empty();
		}).subscribeOn(Schedulers.boundedElastic());
		return execute(call, assembled).toFuture();
	}

	private Mono<Object> answer(IdempotentCalls.Call call, String storageKey, ClaimResult claim,
			IdempotentCalls.Work work) {
		if (claim instanceof ClaimResult.Completed completed) {
			return replay(call, completed.record());
		}
		if (claim instanceof ClaimResult.Acquired acquired) {
			return run(call, storageKey, acquired.lease(), work);
		}
		this.listener.onRequest(call.source(), RequestOutcome.CONFLICT);
		return Mono.error(new IdempotencyInProgressException(call.scope()));
	}

	private Mono<Object> storeFailed(IdempotentCalls.Call call, String storageKey, IdempotentCalls.Work work,
			ClaimFailure failure) {
		if (!this.settings.failOpen()) {
			this.listener.onRequest(call.source(), RequestOutcome.STORE_ERROR);
			return Mono.error(failure.getCause());
		}
		logger.warn("Idempotency store failed; running " + call.scope() + " unprotected (fail-open)",
				failure.getCause());
		this.listener.onRequest(call.source(), RequestOutcome.UNPROTECTED);
		return assemble(storageKey, work);
	}

	/** The method's {@code Mono}, with the execution bound while it is assembled. */
	private static Mono<Object> assemble(String storageKey, IdempotentCalls.Work work) {
		CurrentIdempotentCall current = CurrentIdempotentCall.of(storageKey);
		return Mono.<Object>defer(() -> {
			Object mono;
			try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind(current)) {
				mono = work.run();
			}
			catch (Throwable ex) {
				return Mono.error(ex);
			}
			return (mono != null) ? (Mono<?>) mono : Mono.empty();
		}).contextWrite((context) -> context.put(CurrentIdempotentCall.CONTEXT_KEY, current));
	}

	private Mono<Object> run(IdempotentCalls.Call call, String storageKey, Lease lease, IdempotentCalls.Work work) {
		this.listener.onRequest(call.source(), RequestOutcome.EXECUTED);
		AtomicBoolean settled = new AtomicBoolean();
		Renewal renewal = renew(lease);
		return assemble(storageKey, work)
			.onErrorResume((ex) -> settleOnce(settled, () -> release(call, lease, NotStoredReason.EXCEPTION))
				.then(Mono.error(ex)))
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((result) -> settleOnce(settled, () -> keep(call, lease, result.orElse(null), renewal.isLost()))
				.then(Mono.justOrEmpty(result)))
			.doOnCancel(() -> settleOnce(settled, () -> release(call, lease, NotStoredReason.CANCELLED)).subscribe())
			.doFinally((signal) -> renewal.stop());
	}

	/**
	 * Runs {@code settle} (a complete or a release) unless the call was settled already;
	 * detached from its subscriber, so that a cancellation never stops it half way.
	 */
	private static Mono<Void> settleOnce(AtomicBoolean settled, Supplier<Mono<Void>> settle) {
		if (!settled.compareAndSet(false, true)) {
			return Mono.empty();
		}
		Mono<Void> settling;
		try {
			settling = settle.get();
		}
		catch (RuntimeException | Error ex) {
			// a store that throws instead of signalling: what the call answers is the
			// error
			return Mono.error(ex);
		}
		return Mono.fromFuture(settling.toFuture(), true);
	}

	/**
	 * Renews the lease while the work runs, on stores whose leases expire, as
	 * {@code LeaseRenewer} does: a renewal that fails is tried again at the next tick, a
	 * tick that comes while a renewal is still under way is skipped, and the lease counts
	 * as lost when the store says so or when a whole lock TTL passed without a renewal.
	 */
	private Renewal renew(Lease lease) {
		Renewal renewal = new Renewal(this.settings.lockTtl());
		if (!this.store.leaseExpires()) {
			return renewal;
		}
		Duration period = renewal.lockTtl.dividedBy(3);
		renewal.ticks = Flux.interval(period, period)
			.onBackpressureDrop()
			.concatMap((tick) -> this.store.renew(lease, renewal.lockTtl).onErrorResume((ex) -> {
				logger.warn("Could not renew the idempotency lease of a running call; trying again", ex);
				return Mono.empty();
			}), 0)
			.takeUntil((renewed) -> !renewed)
			.subscribe(renewal::renewed);
		return renewal;
	}

	private Mono<Void> keep(IdempotentCalls.Call call, Lease lease, @Nullable Object result, boolean lost) {
		if (!call.cacheResult()) {
			return release(call, lease, NotStoredReason.DISABLED);
		}
		if (lost) {
			this.listener.onResponse(call.source(), ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
			return Mono.empty();
		}
		byte[] envelope;
		try {
			envelope = this.results.encode(result, call.resultType());
		}
		catch (JacksonException ex) {
			logger.error("The result of " + call.scope() + " could not be written as JSON, so it was not stored "
					+ "and the next call with its key runs again", ex);
			return release(call, lease, NotStoredReason.UNSERIALIZABLE);
		}
		catch (RuntimeException | Error ex) {
			// a serializer that failed hard: the key must not stay claimed
			return release(call, lease, NotStoredReason.UNSERIALIZABLE).then(Mono.error(ex));
		}
		StoredRecord record = new StoredRecord(fingerprint(call), envelope);
		return this.store.complete(lease, record, call.ttl())
			.doOnNext((stored) -> this.listener.onResponse(call.source(),
					stored ? ResponseOutcome.STORED : ResponseOutcome.LOCK_LOST, NotStoredReason.NONE))
			.onErrorResume((ex) -> {
				// the work has had its effects, which an error would hide from the caller
				logger.warn("Could not store the result of " + call.scope() + "; the next call with its key runs "
						+ "again", ex);
				this.listener.onResponse(call.source(), ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
				return Mono.empty();
			})
			.then();
	}

	private Mono<Void> release(IdempotentCalls.Call call, Lease lease, NotStoredReason reason) {
		return this.store.release(lease)
			.doOnNext((released) -> this.listener.onResponse(call.source(),
					released ? ResponseOutcome.NOT_STORED : ResponseOutcome.LOCK_LOST, reason))
			.onErrorResume((ex) -> {
				// never hides what the work answered; the claim lapses with its lease
				logger.warn("Could not release the idempotency key of " + call.scope(), ex);
				this.listener.onResponse(call.source(), ResponseOutcome.STORE_ERROR, reason);
				return Mono.empty();
			})
			.then();
	}

	private Mono<Object> replay(IdempotentCalls.Call call, StoredRecord record) {
		String fingerprint = call.fingerprint();
		if (fingerprint != null && !fingerprint.equals(record.fingerprint())) {
			this.listener.onRequest(call.source(), RequestOutcome.MISMATCH);
			return Mono.error(new IdempotencyKeyReusedException(call.scope()));
		}
		Object result;
		try {
			result = this.results.decode(record.response(), call.resultType());
		}
		catch (IllegalArgumentException | JacksonException ex) {
			this.listener.onRequest(call.source(), RequestOutcome.STORE_ERROR);
			return Mono.error(new IllegalStateException("The stored result of " + call.scope() + " cannot be read as "
					+ call.resultType() + " (did its type change?); evict the record to run the call again", ex));
		}
		this.listener.onRequest(call.source(), RequestOutcome.REPLAYED);
		return Mono.justOrEmpty(result);
	}

	private static String fingerprint(IdempotentCalls.Call call) {
		String fingerprint = call.fingerprint();
		return (fingerprint != null) ? fingerprint : IdempotentCalls.UNVERIFIED;
	}

	/** The renewal of one call's lease. */
	private static final class Renewal {

		private final Duration lockTtl;

		private volatile long lastRenewed = System.nanoTime();

		private volatile boolean refused;

		private volatile @Nullable Disposable ticks;

		Renewal(Duration lockTtl) {
			this.lockTtl = lockTtl;
		}

		void renewed(boolean renewed) {
			if (renewed) {
				this.lastRenewed = System.nanoTime();
			}
			else {
				this.refused = true;
			}
		}

		/** Whether the lease is lost: the store refused it, or a lock TTL went by. */
		boolean isLost() {
			return this.refused
					|| (this.ticks != null && System.nanoTime() - this.lastRenewed > this.lockTtl.toNanos());
		}

		void stop() {
			Disposable ticks = this.ticks;
			if (ticks != null) {
				ticks.dispose();
			}
		}

	}

	/** A claim that failed on the store, told apart from what the work signals. */
	private static final class ClaimFailure extends RuntimeException {

		ClaimFailure(Throwable cause) {
			super(cause.getMessage(), cause, false, false);
		}

	}

}
