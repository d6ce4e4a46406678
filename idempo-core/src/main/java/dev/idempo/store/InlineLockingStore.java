package dev.idempo.store;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.util.Assert;

/**
 * A {@link ReactiveLockingStore} that runs a {@link LockingStore} whose operations never
 * block on the thread that subscribes, without a hop to another scheduler: how the
 * {@linkplain dev.idempo.store.memory.InMemoryLockingStore in-memory store} serves a
 * reactive application.
 * <p>
 * Only for stores that never wait: no I/O, no {@code Object.wait}, no
 * {@code LockSupport.park} (so no {@code ReentrantLock} or blocking queue), and only
 * short monitor sections. The in-memory store qualifies: each operation is a
 * {@code ConcurrentHashMap} compute on one key (a monitor held for a few field writes,
 * never across a wait), lock-free queue and atomic updates, and the store's
 * {@link java.time.Clock}. Its tests run every operation from Reactor's non-blocking
 * threads with BlockHound installed. Two things in it may still touch a blocking
 * primitive, both bounded and neither in a wait for another request: the one-time warning
 * logged when a full store first drops a record (the logging framework's appender), and a
 * writer of a {@code ConcurrentHashMap} bin that holds eight or more colliding keys,
 * which parks until concurrent readers of that bin finish their lookup. A store that does
 * wait (the JDBC stores) belongs in an {@link OffloadedLockingStore}.
 * <p>
 * Nothing runs before subscription. A claim whose subscriber cancels while it runs (from
 * another thread) and that acquires the key releases it again at once, on the same
 * thread, since no subscriber will ever complete or release it.
 *
 * @author idempo
 * @see OffloadedLockingStore
 */
public final class InlineLockingStore implements ReactiveLockingStore {

	private static final Log logger = LogFactory.getLog(InlineLockingStore.class);

	private final LockingStore delegate;

	/**
	 * Runs {@code delegate} on the subscriber's thread.
	 * @param delegate a store whose operations never block
	 */
	public InlineLockingStore(LockingStore delegate) {
		Assert.notNull(delegate, "'delegate' must not be null");
		this.delegate = delegate;
	}

	/**
	 * The store this one runs.
	 * @return the delegate
	 */
	public LockingStore delegate() {
		return this.delegate;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The answer goes through a slot of the subscription, which the first of the answer
	 * and a cancellation takes: a claim cancelled before it starts never reaches the
	 * store, and one cancelled while it runs releases a key it acquired; only the answer
	 * that took the slot is handed to the subscriber, which then owns the lease. The
	 * claim is never fused with its subscriber (whose discard hook fusion would bypass).
	 */
	@Override
	public Mono<ClaimResult> claim(String key, Duration lockTtl) {
		return ClaimHandoff.claim((handoff) -> handoff.run(() -> this.delegate.claim(key, lockTtl)),
				(lease) -> ClaimHandoff.releaseQuietly(this.delegate, lease, logger));
	}

	@Override
	public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
		return Mono.fromCallable(() -> this.delegate.complete(lease, record, ttl));
	}

	@Override
	public Mono<Boolean> release(Lease lease) {
		return Mono.fromCallable(() -> this.delegate.release(lease));
	}

	@Override
	public Mono<Boolean> renew(Lease lease, Duration lockTtl) {
		return Mono.fromCallable(() -> this.delegate.renew(lease, lockTtl));
	}

	@Override
	public boolean leaseExpires() {
		return this.delegate.leaseExpires();
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

}
