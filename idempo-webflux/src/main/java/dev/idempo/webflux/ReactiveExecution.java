package dev.idempo.webflux;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.store.Lease;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;

/**
 * One protected request between its claim and the end of its response: it ends exactly
 * once, by storing the response, or by releasing the key (the response is not storable,
 * the handler failed, the client went away). Renews the lease meanwhile on stores whose
 * claims expire.
 *
 * @author idempo
 */
final class ReactiveExecution {

	private static final Log logger = LogFactory.getLog(ReactiveExecution.class);

	private final ReactiveLockingStore store;

	private final Lease lease;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final String fingerprint;

	private final IdempotentHandlerPolicies.Policy policy;

	private final AtomicBoolean ended = new AtomicBoolean();

	private volatile boolean leaseLost;

	private volatile @Nullable Disposable renewal;

	ReactiveExecution(ReactiveLockingStore store, Lease lease, IdempotencyListener listener,
			IdempotencySettings settings, String fingerprint, IdempotentHandlerPolicies.Policy policy) {
		this.store = store;
		this.lease = lease;
		this.listener = listener;
		this.settings = settings;
		this.fingerprint = fingerprint;
		this.policy = policy;
	}

	/**
	 * Starts renewing the lease every third of the lock TTL if the store's leases expire;
	 * a renewal that finds the lease lost means the response will not be stored.
	 */
	void startRenewal() {
		if (!this.store.leaseExpires()) {
			return;
		}
		Duration lockTtl = this.settings.lockTtl();
		Duration period = lockTtl.dividedBy(3);
		this.renewal = Flux.interval(period, period)
			.concatMap((tick) -> this.store.renew(this.lease, lockTtl).onErrorReturn(true))
			.filter((owned) -> !owned)
			.next()
			.subscribe((lost) -> this.leaseLost = true);
	}

	/**
	 * Why the response will not be stored whatever it turns out to be, or {@code NONE}.
	 * @return the reason
	 */
	NotStoredReason presetReason() {
		return this.policy.cacheResponse() ? NotStoredReason.NONE : NotStoredReason.DISABLED;
	}

	/**
	 * The handler's whole response is known: stores it, or releases the key if it is not
	 * to be stored.
	 * @param status the status
	 * @param headers the replayable headers
	 * @param body the body
	 * @return completes once the store answered
	 */
	Mono<Void> settle(int status, Map<String, List<String>> headers, byte[] body) {
		if (!end()) {
			return Mono.empty();
		}
		NotStoredReason reason = notStoredReason(status, body.length);
		if (reason != NotStoredReason.NONE) {
			return release(reason);
		}
		if (this.leaseLost) {
			logger.warn("Idempotency lease was lost while the handler ran; its response is not stored");
			this.listener.onResponse(Source.WEB, ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
			return releaseQuietly();
		}
		StoredRecord record = new StoredRecord(this.fingerprint,
				ResponseEnvelope.encode(new CapturedResponse(status, headers, body)));
		return uncancellable(this.store.complete(this.lease, record, this.policy.ttl())).flatMap((stored) -> {
			if (stored) {
				this.listener.onResponse(Source.WEB, ResponseOutcome.STORED, NotStoredReason.NONE);
				return Mono.<Void>empty();
			}
			logger.warn("Idempotency lease was lost before the response could be stored; it is not stored");
			this.listener.onResponse(Source.WEB, ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
			return releaseQuietly();
		}).onErrorResume((ex) -> {
			logger.warn("Could not store an idempotent response; a retry will run the handler again", ex);
			this.listener.onResponse(Source.WEB, ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
			return releaseQuietly();
		});
	}

	/**
	 * Ends without storing, for a reason known before the response is (it streams, or the
	 * handler does not store).
	 * @param reason why nothing is stored
	 * @return completes once the key is released
	 */
	Mono<Void> releaseUnstored(NotStoredReason reason) {
		return end() ? release(reason) : Mono.empty();
	}

	/**
	 * The handler or the writing of its response failed: releases the key, unless the
	 * execution has ended.
	 * @return completes once the key is released
	 */
	Mono<Void> fail() {
		return releaseUnstored(NotStoredReason.EXCEPTION);
	}

	/**
	 * The client went away: releases the key in the background, unless the response was
	 * complete (stored or released already).
	 */
	void cancel() {
		if (end()) {
			release(NotStoredReason.CANCELLED).subscribe();
		}
	}

	/**
	 * Whether this call ended the execution; stops renewing.
	 */
	private boolean end() {
		if (!this.ended.compareAndSet(false, true)) {
			return false;
		}
		Disposable renewal = this.renewal;
		if (renewal != null) {
			renewal.dispose();
		}
		return true;
	}

	private NotStoredReason notStoredReason(int status, int size) {
		if (!this.policy.cacheResponse()) {
			return NotStoredReason.DISABLED;
		}
		if (size > this.settings.maxResponseSize()) {
			return NotStoredReason.TOO_LARGE;
		}
		return this.policy.responses().isStored(status) ? NotStoredReason.NONE : NotStoredReason.STATUS;
	}

	private Mono<Void> release(NotStoredReason reason) {
		return uncancellable(this.store.release(this.lease))
			.doOnNext((released) -> this.listener.onResponse(Source.WEB,
					released ? ResponseOutcome.NOT_STORED : ResponseOutcome.LOCK_LOST, reason))
			.onErrorResume((ex) -> {
				logger.warn("Could not release an idempotency key; it frees itself when its lock expires", ex);
				this.listener.onResponse(Source.WEB, ResponseOutcome.STORE_ERROR, reason);
				return Mono.empty();
			})
			.then();
	}

	/**
	 * Frees what a lost claim may have left behind; a no-op when another request owns the
	 * key.
	 */
	private Mono<Void> releaseQuietly() {
		return uncancellable(this.store.release(this.lease)).onErrorResume((ex) -> {
			logger.debug("Could not release an idempotency key", ex);
			return Mono.empty();
		}).then();
	}

	/**
	 * Runs a store operation to its end even if the request is cancelled meanwhile (the
	 * client went away while its response was being stored): a cancelled {@code complete}
	 * or {@code release} would leave the key claimed until its lock expires.
	 */
	private static <T> Mono<T> uncancellable(Mono<T> operation) {
		return Mono.defer(() -> Mono.fromFuture(operation.toFuture(), true));
	}

}
