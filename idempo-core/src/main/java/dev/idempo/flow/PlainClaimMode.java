package dev.idempo.flow;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ObservedLockingStore;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;

/**
 * The plain mode: a key is claimed on the {@link LockingStore} (an owner's lease, renewed
 * while the work runs on stores whose leases expire), and the record is stored or the key
 * released by compare-and-set on that lease. Store operations are counted by the
 * {@link ObservedLockingStore} it is given.
 *
 * @author idempo
 */
public final class PlainClaimMode implements ClaimMode<PlainClaimMode.PlainHold> {

	private final LockingStore store;

	private final IdempotencySettings settings;

	private final LeaseRenewer leaseRenewer;

	/**
	 * Creates the plain mode of a store.
	 * @param store the store, observed
	 * @param settings the settings (lock TTL, fail-open)
	 * @param leaseRenewer renews leases on stores whose claims expire
	 */
	public PlainClaimMode(LockingStore store, IdempotencySettings settings, LeaseRenewer leaseRenewer) {
		this.store = store;
		this.settings = settings;
		this.leaseRenewer = leaseRenewer;
	}

	@Override
	public Claim<PlainHold> claim(String storageKey, Duration wait) {
		ClaimResult claim = claimWaiting(storageKey, wait);
		if (claim instanceof ClaimResult.Completed completed) {
			return new Replay<>(completed.record());
		}
		if (claim instanceof ClaimResult.Acquired acquired) {
			return new Held<>(hold(acquired.lease()));
		}
		if (claim instanceof ClaimResult.InProgress) {
			return new InProgress<>();
		}
		throw new IllegalStateException("The idempotency store " + this.store.name() + " answered a claim with " + claim
				+ ", not a ClaimResult");
	}

	@Override
	public boolean isStoreFailure(RuntimeException failure) {
		return true;
	}

	@Override
	public boolean failsOpen() {
		return this.settings.failOpen();
	}

	/**
	 * Holds a lease just acquired, renewing it while the work runs
	 * ({@link PlainHold#workStarted()}) if the store's leases expire.
	 * @param lease the lease
	 * @return the hold
	 */
	public PlainHold hold(Lease lease) {
		return new PlainHold(lease);
	}

	private ClaimResult claimWaiting(String storageKey, Duration wait) {
		ClaimWait waiting = ClaimWait.of(wait);
		while (true) {
			ClaimResult claim = this.store.claim(storageKey, this.settings.lockTtl());
			long pauseMillis = (claim instanceof ClaimResult.InProgress) ? waiting.nextPauseMillis() : -1;
			if (pauseMillis < 0) {
				return claim;
			}
			try {
				Thread.sleep(pauseMillis);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return claim;
			}
		}
	}

	/**
	 * A lease on the store, renewed while the work runs where leases expire.
	 */
	public final class PlainHold implements ClaimMode.Hold {

		private final Lease lease;

		// started on the claiming thread, read where the work ends (an async dispatch)
		private volatile LeaseRenewer.@Nullable Renewal renewal;

		private PlainHold(Lease lease) {
			this.lease = lease;
		}

		@Override
		public void workStarted() {
			LockingStore store = PlainClaimMode.this.store;
			if (this.renewal == null && store.leaseExpires()) {
				this.renewal = PlainClaimMode.this.leaseRenewer.renew(store, this.lease,
						PlainClaimMode.this.settings.lockTtl());
			}
		}

		@Override
		public boolean commitsWithWork() {
			return false;
		}

		@Override
		public void workEnded() {
			if (this.renewal != null) {
				this.renewal.stop();
			}
		}

		@Override
		public boolean isLost() {
			return this.renewal != null && this.renewal.isLost();
		}

		@Override
		public boolean lapses() {
			return PlainClaimMode.this.store.leaseExpires();
		}

		@Override
		public boolean complete(StoredRecord record, Duration ttl) {
			return PlainClaimMode.this.store.complete(this.lease, record, ttl);
		}

		@Override
		public void recordFailed(Throwable failure) {
			// the work's effects stay: the caller releases the claim as it sees fit
		}

		@Override
		public boolean release(@Nullable Throwable failure) {
			return PlainClaimMode.this.store.release(this.lease);
		}

	}

}
