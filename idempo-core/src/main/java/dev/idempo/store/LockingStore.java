package dev.idempo.store;

import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * Claims idempotency keys and keeps the responses of completed requests.
 * <p>
 * The request flow makes one {@link #claim} per protected request and, if the claim was
 * {@linkplain ClaimResult.Acquired acquired}, exactly one {@link #complete} or
 * {@link #release} when the handler has finished, from the thread that finishes the
 * request (a servlet container thread, or the async dispatch thread for asynchronous
 * handlers). {@link #renew} is called from a single background thread while the handler
 * runs. Implementations must be thread-safe; calls for different keys and for the same
 * key arrive concurrently, from any number of application instances.
 * <p>
 * "Busy" and "lost" are return values, never exceptions. Only infrastructure failures
 * (store unreachable, timeout, corrupt data) throw, preferably as
 * {@link LockingStoreException}; the request flow then fails closed with {@code 503} (or,
 * if configured, runs the handler unprotected).
 * <p>
 * Keys passed in are digests (lowercase hex) computed by the request flow; raw client
 * input never reaches a store.
 *
 * @author idempo
 */
public interface LockingStore {

	/**
	 * Atomically claims {@code key} or fetches its completed record, in one round trip to
	 * the backing store.
	 * <ul>
	 * <li>a completed, unexpired record exists: {@link ClaimResult.Completed} with it
	 * (the caller compares fingerprints and replays or rejects);</li>
	 * <li>another claim holds the key: {@link ClaimResult.InProgress};</li>
	 * <li>otherwise the key is claimed with a fresh owner token:
	 * {@link ClaimResult.Acquired}.</li>
	 * </ul>
	 * @param key the storage key (a digest of caller scope and idempotency key)
	 * @param lockTtl how long the claim survives without {@link #renew renewal} on stores
	 * whose claims are leases; stores whose locks die with a connection may ignore it
	 * @return the outcome, never {@code null}
	 * @throws LockingStoreException if the store cannot be reached or answers garbage
	 */
	ClaimResult claim(String key, Duration lockTtl);

	/**
	 * Stores {@code record} for {@code ttl} and releases the claim, in one atomic
	 * operation, but only while {@code lease} still owns the key (compare-and-set on the
	 * owner token).
	 * @param lease the lease returned by {@link #claim}
	 * @param record the fingerprint and encoded response to keep
	 * @param ttl how long the record stays replayable; positive
	 * @return {@code true} if stored; {@code false} if the lease no longer owned the key
	 * (it expired, its connection died, or another request claimed the key meanwhile), in
	 * which case nothing was written
	 * @throws LockingStoreException if the store cannot be reached
	 */
	boolean complete(Lease lease, StoredRecord record, Duration ttl);

	/**
	 * Releases the claim without storing anything, so that the next request with the key
	 * runs the handler. A no-op unless {@code lease} still owns the key.
	 * @param lease the lease returned by {@link #claim}
	 * @return {@code true} if this call released the key, {@code false} if the lease had
	 * already lost it
	 * @throws LockingStoreException if the store cannot be reached
	 */
	boolean release(Lease lease);

	/**
	 * Extends the claim by {@code lockTtl} from now while the handler still runs. Called
	 * periodically (about every third of {@code lockTtl}) only when
	 * {@link #leaseExpires()} is {@code true}.
	 * @param lease the lease returned by {@link #claim}
	 * @param lockTtl the new time to live of the claim
	 * @return {@code true} if the lease still owns the key and was extended,
	 * {@code false} if it was lost (the response will then not be stored)
	 * @throws LockingStoreException if the store cannot be reached
	 */
	default boolean renew(Lease lease, Duration lockTtl) {
		return true;
	}

	/**
	 * Whether claims are time-bounded leases that must be {@linkplain #renew renewed}
	 * while the handler runs. Stores whose locks are bound to a live connection return
	 * {@code false}.
	 * @return whether claims expire unless renewed
	 */
	default boolean leaseExpires() {
		return false;
	}

	/**
	 * Reads what the store holds for {@code key}, for support tooling (the {@code idempo}
	 * Actuator endpoint): never called on the request path, so it may take more than one
	 * round trip and need not be atomic.
	 * @param key the storage key
	 * @return the state, never {@code null}
	 * @throws LockingStoreException if the store cannot be reached
	 * @throws UnsupportedOperationException if this store cannot be inspected
	 */
	default RecordState inspect(String key) {
		throw new UnsupportedOperationException(name() + " cannot be inspected");
	}

	/**
	 * Removes the completed record of {@code key}, so that the next request with the key
	 * runs the handler (a support engineer unsticking a client). A claim of a request in
	 * flight is left alone: it ends with its request.
	 * @param key the storage key
	 * @return whether a record was removed
	 * @throws LockingStoreException if the store cannot be reached
	 * @throws UnsupportedOperationException if this store cannot evict
	 */
	default boolean evict(String key) {
		throw new UnsupportedOperationException(name() + " cannot evict records");
	}

	/**
	 * Tells {@code listener} of every key {@linkplain #evict evicted} through any
	 * instance that shares this store, this one included, so that copies of records kept
	 * outside the store (a local replay cache) go with them. Called once per listener, at
	 * start-up, never on the request path; the listener runs on a thread of the store's
	 * client and must return quickly.
	 * @param listener told each evicted storage key
	 * @return closes the subscription, or {@code null} if this store cannot tell
	 * evictions made on other instances (copies elsewhere then live until they expire)
	 * @throws LockingStoreException if the store cannot be reached
	 */
	default @Nullable AutoCloseable subscribeToEvictions(Consumer<String> listener) {
		return null;
	}

	/**
	 * Checks, for health endpoints, that the store answers as the request flow reaches
	 * it, and tells what an operator wants to see of it (its size, its open connections).
	 * Called from health checks only, never on the request path. Each store contributes
	 * its own details here, so that health indicators need not know store classes.
	 * @return the details to show, possibly empty (a store that cannot check is reported
	 * up with its name only)
	 * @throws LockingStoreException if the store cannot be reached
	 */
	default Map<String, Object> checkHealth() {
		return Map.of();
	}

	/**
	 * A short, stable name for this store, used as the {@code store} tag of metrics.
	 * @return the store name
	 */
	default String name() {
		return getClass().getSimpleName();
	}

}
