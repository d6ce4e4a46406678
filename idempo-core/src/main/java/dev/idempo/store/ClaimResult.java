package dev.idempo.store;

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
	 */
	record Completed(StoredRecord record) implements ClaimResult {
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
