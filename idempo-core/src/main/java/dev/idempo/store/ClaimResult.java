package dev.idempo.store;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of {@link LockingStore#claim}.
 *
 * @author idempo
 */
public sealed interface ClaimResult permits ClaimResult.Acquired, ClaimResult.Completed, ClaimResult.InProgress {

	/**
	 * The key was free and now belongs to the caller.
	 *
	 * @param lease the lease to pass to complete, release and renew
	 */
	record Acquired(Lease lease) implements ClaimResult {
	}

	/**
	 * A completed, unexpired record exists for the key.
	 *
	 * @param record the stored record
	 * @param remainingTtl how long the record has left to live, as the store measured it
	 * when it answered, or {@code null} if the store does not tell (a local replay cache
	 * then keeps no copy of a record it first sees here)
	 */
	record Completed(StoredRecord record, @Nullable Duration remainingTtl) implements ClaimResult {

		/**
		 * A completed record whose remaining time to live the store does not tell.
		 * @param record the stored record
		 */
		public Completed(StoredRecord record) {
			this(record, null);
		}

	}

	/**
	 * Another request holds the key.
	 */
	record InProgress() implements ClaimResult {

		private static final InProgress INSTANCE = new InProgress();

		/**
		 * The shared instance.
		 * @return the instance
		 */
		public static InProgress instance() {
			return INSTANCE;
		}

	}

}
