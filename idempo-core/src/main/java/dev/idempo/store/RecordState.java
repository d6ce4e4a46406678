package dev.idempo.store;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * What a store holds for one key, as support tooling sees it
 * ({@link LockingStore#inspect}): a request in flight, a completed record, both (a lease
 * outliving an expired record cannot happen, but a record and a claim can coexist only
 * for an instant), or nothing.
 *
 * @param inFlight whether a request holds the key's claim
 * @param record the completed, unexpired record, if any
 * @param expiresAt when the record expires, if there is one and the store knows
 * @author idempo
 */
public record RecordState(boolean inFlight, @Nullable StoredRecord record, @Nullable Instant expiresAt) {

	/** Nothing is held for the key. */
	public static final RecordState ABSENT = new RecordState(false, null, null);

	/**
	 * Whether nothing is held for the key.
	 * @return whether absent
	 */
	public boolean isAbsent() {
		return !this.inFlight && this.record == null;
	}

}
