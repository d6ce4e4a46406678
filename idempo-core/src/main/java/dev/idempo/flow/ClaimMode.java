package dev.idempo.flow;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;

/**
 * How a key is claimed and how the record of its work commits: one implementation per
 * mode ({@link PlainClaimMode} on a {@code LockingStore}, and the transactional mode of
 * {@code dev.idempo.transaction}), behind the one flow of each entry point (web handlers,
 * idempotent methods, the template). The entry points decide what to answer; a mode only
 * says what happened, and counts its own store operations.
 *
 * @author idempo
 */
public interface ClaimMode<H extends ClaimMode.Hold> {

	/**
	 * Claims {@code storageKey}.
	 * @param storageKey the storage key
	 * @param wait how long to wait while another call holds the key; modes whose claims
	 * never wait answer {@link InProgress} at once
	 * @return the record to replay, the key in progress, or the claim now held
	 * @throws RuntimeException if the store fails (see {@link #isStoreFailure}) or the
	 * call cannot be protected in this mode
	 */
	Claim<H> claim(String storageKey, Duration wait);

	/**
	 * Whether {@code failure}, thrown by {@link #claim}, is the store failing (answered
	 * as the store-failure mode says) rather than a misuse that propagates as it is.
	 * @param failure what {@link #claim} threw
	 * @return whether the store failed
	 */
	boolean isStoreFailure(RuntimeException failure);

	/**
	 * Whether a store failure runs the work unprotected: where
	 * {@code idempo.store-failure.mode=fail-open}, and never where the work's writes
	 * would commit without a record.
	 * @return whether fail-open applies
	 */
	boolean failsOpen();

	/**
	 * What a claim found, on either face of the flow: a {@link Hold} of a blocking mode,
	 * or the {@link ReactiveClaimMode.ReactiveHold} of the non-blocking one.
	 *
	 * @param <H> the mode's hold
	 */
	sealed interface Claim<H> permits Replay, InProgress, Held {

	}

	/**
	 * A completed record of the key: its response is replayed, the work does not run.
	 *
	 * @param <H> the mode's hold
	 * @param record the record
	 */
	record Replay<H>(StoredRecord record) implements Claim<H> {
	}

	/**
	 * Another call holds the key.
	 *
	 * @param <H> the mode's hold
	 */
	record InProgress<H>() implements Claim<H> {
	}

	/**
	 * The key is claimed: the work runs, and the hold ends it exactly once.
	 *
	 * @param <H> the mode's hold
	 * @param hold the claim
	 */
	record Held<H>(H hold) implements Claim<H> {
	}

	/**
	 * A claim held while its work runs, ended by {@link #complete} or {@link #release}.
	 */
	interface Hold {

		/**
		 * Whether the record commits with the work's own writes (transactional): the
		 * work's effects are undone whenever its record cannot be stored, instead of
		 * being kept without a record.
		 * @return whether they commit together
		 */
		boolean commitsWithWork();

		/**
		 * The work is about to run: a claim whose lease expires is renewed from now on.
		 * Called by the entry point once the claim was taken, outside the claim's own
		 * failure handling, so that a renewal that cannot start is not mistaken for a
		 * store failure.
		 */
		default void workStarted() {
		}

		/**
		 * The work has returned or thrown: the claim is no longer renewed, and what
		 * follows counts as storing its record.
		 */
		void workEnded();

		/**
		 * Whether the claim was found lost while the work ran (a lease that lapsed).
		 * @return whether it was lost
		 */
		boolean isLost();

		/**
		 * Whether the claim frees itself once no longer renewed (a lease), so that work
		 * whose end is unknown can leave it to lapse instead of releasing it.
		 * @return whether it lapses
		 */
		boolean lapses();

		/**
		 * Stores {@code record} under the claim, which ends it, only while the claim
		 * still owns the key (compare-and-set).
		 * @param record the record
		 * @param ttl how long it is kept
		 * @return whether it was stored; {@code false} if the claim was lost
		 * @throws RuntimeException if the store fails; a {@link NotCommittedException} if
		 * the work's writes were undone with the record
		 */
		boolean complete(StoredRecord record, Duration ttl);

		/**
		 * Storing failed before {@link #complete} (the record could not be made): where
		 * the record commits with the work, its transaction is rolled back and the
		 * failure counted as a failed store operation; otherwise nothing happens, and the
		 * claim is still held.
		 * @param failure what failed, which a failure to roll back is added to
		 */
		void recordFailed(Throwable failure);

		/**
		 * Ends the claim without a record: released, or rolled back with the work's
		 * writes.
		 * @param failure what the work threw, which a failure to roll back is added to as
		 * suppressed, or {@code null}
		 * @return whether the claim still owned the key; {@code false} if it was lost
		 * @throws RuntimeException if the store fails, or the rollback without a
		 * {@code failure} does
		 */
		boolean release(@Nullable Throwable failure);

	}

	/**
	 * The record and the work's writes could not be committed, and were rolled back (or
	 * the commit itself failed, leaving the outcome unknown); thrown by
	 * {@link Hold#complete} in transactional mode, for the entry point to unwrap.
	 */
	final class NotCommittedException extends RuntimeException {

		private final boolean outcomeUnknown;

		/**
		 * Creates the exception.
		 * @param cause what failed: an {@code SQLException}, a {@code RuntimeException}
		 * or an {@code Error}
		 * @param outcomeUnknown whether the commit itself failed, so that it may or may
		 * not have committed
		 */
		public NotCommittedException(Throwable cause, boolean outcomeUnknown) {
			super(cause.getMessage(), cause, false, false);
			this.outcomeUnknown = outcomeUnknown;
		}

		/**
		 * Whether it may or may not have committed.
		 * @return whether the outcome is unknown
		 */
		public boolean isOutcomeUnknown() {
			return this.outcomeUnknown;
		}

	}

}
