package dev.idempo.flow;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.flow.ClaimMode.Claim;
import dev.idempo.flow.ClaimMode.Held;
import dev.idempo.flow.ClaimMode.InProgress;
import dev.idempo.flow.ClaimMode.Replay;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;

/**
 * The non-blocking face of the plain mode ({@link PlainClaimMode}), for the reactive
 * entry points (the WebFlux filter, the gateway filter, {@code Mono} and future methods):
 * the same claims with the same waits ({@link ClaimWait}), and a hold whose lease is
 * renewed by the one {@link LeaseRenewer} with the same semantics as on the blocking face
 * (a lease that a renewal found lost, or that no renewal kept for a whole lock TTL, is
 * lost and its result is not stored). The hold also settles the work once, storing its
 * record or releasing the key, and counts the outcome, so that every reactive entry point
 * ends its claims alike.
 * <p>
 * Nothing here blocks: the store answers {@code Mono}s, waits are timers, and a renewal
 * is only added to the renewer's set.
 *
 * @author idempo
 */
public final class ReactiveClaimMode {

	private static final Log logger = LogFactory.getLog(ReactiveClaimMode.class);

	private final ReactiveLockingStore store;

	private final IdempotencySettings settings;

	private final LeaseRenewer leaseRenewer;

	private final IdempotencyListener listener;

	/**
	 * Creates the reactive face of a store.
	 * @param store the store, observed
	 * @param settings the settings (lock TTL)
	 * @param leaseRenewer renews leases on stores whose claims expire
	 * @param listener counts how held claims end
	 */
	public ReactiveClaimMode(ReactiveLockingStore store, IdempotencySettings settings, LeaseRenewer leaseRenewer,
			IdempotencyListener listener) {
		this.store = store;
		this.settings = settings;
		this.leaseRenewer = leaseRenewer;
		this.listener = listener;
	}

	/**
	 * Claims {@code storageKey} when subscribed; while another call holds it, claims
	 * again for at most {@code wait}, with the pauses of {@link ClaimWait} (timers, no
	 * thread waits).
	 * @param storageKey the storage key
	 * @param wait how long to wait while another call holds the key; zero for not at all
	 * @return the record to replay, the key in progress, or the claim now held; an error
	 * if the store failed
	 */
	public Mono<Claim<ReactiveHold>> claim(String storageKey, Duration wait) {
		return Mono.defer(() -> claimWaiting(storageKey, ClaimWait.of(wait)))
			.switchIfEmpty(Mono.error(() -> new IllegalStateException(
					"The idempotency store " + this.store.name() + " answered a claim with nothing")))
			.map(this::claim);
	}

	private Mono<ClaimResult> claimWaiting(String storageKey, ClaimWait wait) {
		return this.store.claim(storageKey, this.settings.lockTtl()).flatMap((claim) -> {
			long pauseMillis = (claim instanceof ClaimResult.InProgress) ? wait.nextPauseMillis() : -1;
			if (pauseMillis < 0) {
				return Mono.just(claim);
			}
			// flatMap, not then(defer): then() drops a claim answered as the request is
			// cancelled without a discard hook seeing it, and its lease would be lost
			return Mono.delay(Duration.ofMillis(pauseMillis)).flatMap((tick) -> claimWaiting(storageKey, wait));
		});
	}

	private Claim<ReactiveHold> claim(ClaimResult claim) {
		if (claim instanceof ClaimResult.Completed completed) {
			return new Replay<>(completed.record());
		}
		if (claim instanceof ClaimResult.Acquired acquired) {
			return new Held<>(new ReactiveHold(acquired.lease()));
		}
		if (claim instanceof ClaimResult.InProgress) {
			return new InProgress<>();
		}
		throw new IllegalStateException("The idempotency store " + this.store.name() + " answered a claim with " + claim
				+ ", not a ClaimResult");
	}

	/**
	 * A lease held while the work runs, ended exactly once: by {@link #store} or
	 * {@link #release}, whichever is called first; later calls do nothing. Once called,
	 * the store operation runs to its end even if whoever waits for it cancels (the
	 * client went away while its response was being stored): a cancelled {@code complete}
	 * or {@code release} would leave the key claimed until its lease expires.
	 */
	public final class ReactiveHold {

		private final Lease lease;

		private final AtomicBoolean ended = new AtomicBoolean();

		private volatile LeaseRenewer.@Nullable Renewal renewal;

		private ReactiveHold(Lease lease) {
			this.lease = lease;
		}

		/**
		 * The work is about to run: the lease is renewed from now on, where leases
		 * expire. Never blocks.
		 */
		public void workStarted() {
			ReactiveLockingStore store = ReactiveClaimMode.this.store;
			if (this.renewal == null && !this.ended.get() && store.leaseExpires()) {
				LeaseRenewer.Renewal renewal = ReactiveClaimMode.this.leaseRenewer.renew(store, this.lease,
						ReactiveClaimMode.this.settings.lockTtl());
				this.renewal = renewal;
				// an end that ran meanwhile may have read no renewal to stop
				if (this.ended.get()) {
					renewal.stop();
				}
			}
		}

		/**
		 * Whether the lease was found lost while the work ran.
		 * @return whether it was lost
		 */
		public boolean isLost() {
			LeaseRenewer.Renewal renewal = this.renewal;
			return renewal != null && renewal.isLost();
		}

		/**
		 * Whether the hold has ended ({@link #store} or {@link #release} was called).
		 * @return whether it ended
		 */
		public boolean isEnded() {
			return this.ended.get();
		}

		/**
		 * Stores {@code record} under the lease, unless the lease was lost, and counts
		 * the outcome: stored, lock lost, or a store error; a record that is not stored
		 * frees what the lease may have left behind. Store failures are counted and
		 * logged, never signalled: the work has had its effects, which an error would
		 * hide.
		 * @param source the entry point, for the meters
		 * @param record the record
		 * @param ttl how long it is kept
		 * @param what what was not stored, for the log ("the response", "the result of
		 * ...")
		 * @return completes once the store answered; empty at once if the hold had ended
		 */
		public Mono<Void> store(Source source, StoredRecord record, Duration ttl, String what) {
			return endOnce(() -> {
				if (isLost()) {
					logger.warn("The idempotency lease was lost while the work ran; " + what + " is not stored");
					return lost(source);
				}
				ReactiveLockingStore store = ReactiveClaimMode.this.store;
				return Mono.defer(() -> store.complete(this.lease, record, ttl)).flatMap((stored) -> {
					if (stored) {
						ReactiveClaimMode.this.listener.onResponse(source, ResponseOutcome.STORED,
								NotStoredReason.NONE);
						return Mono.<Void>empty();
					}
					logger.warn("The idempotency lease was lost before " + what + " could be stored; it is not stored");
					return lost(source);
				}).onErrorResume((ex) -> {
					logger.warn("Could not store " + what + "; a retry runs the work again", ex);
					ReactiveClaimMode.this.listener.onResponse(source, ResponseOutcome.STORE_ERROR,
							NotStoredReason.NONE);
					return releaseQuietly();
				});
			});
		}

		/**
		 * Releases the key without a record, and counts why.
		 * @param source the entry point, for the meters
		 * @param reason why nothing is stored
		 * @return completes once the store answered; empty at once if the hold had ended
		 */
		public Mono<Void> release(Source source, NotStoredReason reason) {
			return endOnce(() -> Mono.defer(() -> ReactiveClaimMode.this.store.release(this.lease))
				.doOnNext((released) -> ReactiveClaimMode.this.listener.onResponse(source,
						released ? ResponseOutcome.NOT_STORED : ResponseOutcome.LOCK_LOST, reason))
				.onErrorResume((ex) -> {
					// never hides what the work answered; the claim lapses with its lease
					logger.warn("Could not release an idempotency key; it frees itself when its lease expires", ex);
					ReactiveClaimMode.this.listener.onResponse(source, ResponseOutcome.STORE_ERROR, reason);
					return Mono.empty();
				})
				.then());
		}

		/**
		 * The record could not be made (a response filter failed): counted as a store
		 * error, as on the blocking face, and the key released.
		 * @param source the entry point, for the meters
		 * @return completes once the store answered; empty at once if the hold had ended
		 */
		public Mono<Void> recordFailed(Source source) {
			return endOnce(() -> {
				ReactiveClaimMode.this.listener.onResponse(source, ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
				return releaseQuietly();
			});
		}

		private Mono<Void> lost(Source source) {
			ReactiveClaimMode.this.listener.onResponse(source, ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
			return releaseQuietly();
		}

		/**
		 * Frees what a lost claim may have left behind; a no-op when another call owns
		 * the key.
		 */
		private Mono<Void> releaseQuietly() {
			return Mono.defer(() -> ReactiveClaimMode.this.store.release(this.lease)).onErrorResume((ex) -> {
				logger.debug("Could not release an idempotency key", ex);
				return Mono.empty();
			}).then();
		}

		/**
		 * Ends the hold if this is the first end, stops renewing, and starts
		 * {@code settle} now, detached from its subscriber.
		 */
		private Mono<Void> endOnce(Supplier<Mono<Void>> settle) {
			if (!this.ended.compareAndSet(false, true)) {
				return Mono.empty();
			}
			LeaseRenewer.Renewal renewal = this.renewal;
			if (renewal != null) {
				renewal.stop();
			}
			Mono<Void> settling;
			try {
				settling = settle.get();
			}
			catch (RuntimeException | Error ex) {
				return Mono.error(ex);
			}
			return Mono.fromFuture(settling.toFuture(), true);
		}

	}

}
