package dev.idempo.store;

import java.time.Duration;

import reactor.core.publisher.Mono;

/**
 * The non-blocking counterpart of {@link LockingStore}, for reactive request flows
 * (Spring WebFlux, a gateway, methods returning {@code Mono}): the same operations with
 * the same semantics and the same records, so that a reactive and a blocking application
 * can share one store, but each answers a {@link Mono} that never blocks the thread that
 * subscribes to it or the thread that completes it.
 * <p>
 * Every {@code Mono} is cold: nothing reaches the store before it is subscribed, and each
 * subscription is one more operation. A subscriber that cancels a {@link #claim} must not
 * be left owning the key: an implementation whose claim cannot be cancelled once sent
 * releases a key that it acquired for a cancelled subscriber.
 * <p>
 * "Busy" and "lost" are values, never errors; only infrastructure failures signal an
 * error, preferably a {@link LockingStoreException}.
 *
 * @author idempo
 * @see LockingStore
 */
public interface ReactiveLockingStore {

	/**
	 * Claims {@code key} or fetches its completed record, as {@link LockingStore#claim}.
	 * @param key the storage key (a digest of caller scope and idempotency key)
	 * @param lockTtl how long the claim survives without {@link #renew renewal}
	 * @return the outcome
	 */
	Mono<ClaimResult> claim(String key, Duration lockTtl);

	/**
	 * Stores {@code record} and releases the claim while {@code lease} owns the key, as
	 * {@link LockingStore#complete}.
	 * @param lease the lease of the claim
	 * @param record the record to keep
	 * @param ttl how long the record stays replayable; positive
	 * @return {@code true} if stored, {@code false} if the lease had lost the key
	 */
	Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl);

	/**
	 * Releases the claim without storing anything, as {@link LockingStore#release}.
	 * @param lease the lease of the claim
	 * @return {@code true} if this call released the key
	 */
	Mono<Boolean> release(Lease lease);

	/**
	 * Extends the claim while the handler still runs, as {@link LockingStore#renew}.
	 * @param lease the lease of the claim
	 * @param lockTtl the new time to live of the claim
	 * @return {@code true} if the lease still owns the key
	 */
	default Mono<Boolean> renew(Lease lease, Duration lockTtl) {
		return Mono.just(true);
	}

	/**
	 * Whether claims are leases that the request flow must {@link #renew}, as
	 * {@link LockingStore#leaseExpires()}.
	 * @return whether leases expire
	 */
	default boolean leaseExpires() {
		return false;
	}

	/**
	 * A short name for logs, metrics and health details.
	 * @return the name
	 */
	default String name() {
		return getClass().getSimpleName();
	}

}
