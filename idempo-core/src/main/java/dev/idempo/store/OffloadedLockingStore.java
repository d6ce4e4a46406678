package dev.idempo.store;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.util.Assert;

/**
 * A {@link ReactiveLockingStore} that runs a blocking {@link LockingStore} off the
 * subscriber's thread, on a {@link Scheduler} made for blocking work
 * ({@link Schedulers#boundedElastic()} unless given another): how the JDBC stores, which
 * hold a lock session per claim, serve a reactive application.
 * <p>
 * A claim cancelled before it starts never reaches the store. One cancelled while it runs
 * cannot be taken back: if it acquires the key, the key is released again, on the
 * scheduler, since no subscriber will ever complete or release it.
 *
 * @author idempo
 */
public final class OffloadedLockingStore implements ReactiveLockingStore {

	private static final Log logger = LogFactory.getLog(OffloadedLockingStore.class);

	/** In a claim's slot: its subscriber cancelled. */
	private static final Object CANCELLED = new Object();

	/** In a claim's slot: the claim failed. */
	private static final Object FAILED = new Object();

	private final LockingStore delegate;

	private final Scheduler scheduler;

	/**
	 * Runs {@code delegate} on {@link Schedulers#boundedElastic()}.
	 * @param delegate the blocking store
	 */
	public OffloadedLockingStore(LockingStore delegate) {
		this(delegate, Schedulers.boundedElastic());
	}

	/**
	 * Runs {@code delegate} on {@code scheduler}.
	 * @param delegate the blocking store
	 * @param scheduler a scheduler whose threads may block
	 */
	public OffloadedLockingStore(LockingStore delegate, Scheduler scheduler) {
		Assert.notNull(delegate, "'delegate' must not be null");
		Assert.notNull(scheduler, "'scheduler' must not be null");
		this.delegate = delegate;
		this.scheduler = scheduler;
	}

	/**
	 * The blocking store this one runs.
	 * @return the delegate
	 */
	public LockingStore delegate() {
		return this.delegate;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The blocking claim is never interrupted: a subscriber that cancels while it runs
	 * lets it finish, and a key it acquired is released again. A subscriber that has
	 * received the claim's value owns the lease, even if it cancels at the same moment.
	 */
	@Override
	public Mono<ClaimResult> claim(String key, Duration lockTtl) {
		return Mono.<ClaimResult>create((sink) -> {
			AtomicReference<@Nullable Object> slot = new AtomicReference<>();
			// a cancel never disposes the task: interrupting a claim would lose its
			// answer; a cancel that comes while the answer is handed over, which the
			// sink would drop, takes the answer from the slot and releases it
			sink.onCancel(() -> releaseIfAcquired(slot.getAndSet(CANCELLED)));
			try {
				this.scheduler.schedule(() -> runClaim(key, lockTtl, slot, sink));
			}
			catch (RejectedExecutionException ex) {
				sink.error(ex);
			}
		}).doOnDiscard(ClaimResult.Acquired.class, (acquired) -> releaseAbandoned(acquired.lease()));
	}

	/**
	 * Runs a claim unless its subscriber went first; hands the answer over only if it
	 * takes the slot before a cancellation does, else gives an acquired key back at once.
	 * The sink discards an answer whose subscriber cancels while it is parked, which
	 * releases it too.
	 */
	private void runClaim(String key, Duration lockTtl, AtomicReference<@Nullable Object> slot,
			MonoSink<ClaimResult> sink) {
		if (slot.get() == CANCELLED) {
			return;
		}
		ClaimResult result;
		try {
			result = this.delegate.claim(key, lockTtl);
		}
		catch (Throwable ex) {
			if (slot.compareAndSet(null, FAILED)) {
				sink.error(ex);
			}
			return;
		}
		if (slot.compareAndSet(null, result)) {
			sink.success(result);
		}
		else {
			releaseIfAcquired(result);
		}
	}

	private void releaseIfAcquired(@Nullable Object answer) {
		if (answer instanceof ClaimResult.Acquired acquired) {
			releaseAbandoned(acquired.lease());
		}
	}

	/** Gives back a key acquired for a subscriber that had gone. */
	private void releaseAbandoned(Lease lease) {
		if (!Schedulers.isInNonBlockingThread()) {
			releaseQuietly(lease);
			return;
		}
		try {
			this.scheduler.schedule(() -> releaseQuietly(lease));
		}
		catch (RejectedExecutionException ex) {
			logger.warn("Could not release an idempotency key claimed for a cancelled request (the scheduler is "
					+ "shut down); it stays locked until its lease ends", ex);
		}
	}

	private void releaseQuietly(Lease lease) {
		try {
			this.delegate.release(lease);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release an idempotency key claimed for a cancelled request; it stays locked"
					+ " until its lease ends", ex);
		}
	}

	@Override
	public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
		return Mono.fromCallable(() -> this.delegate.complete(lease, record, ttl)).subscribeOn(this.scheduler);
	}

	@Override
	public Mono<Boolean> release(Lease lease) {
		return Mono.fromCallable(() -> this.delegate.release(lease)).subscribeOn(this.scheduler);
	}

	@Override
	public Mono<Boolean> renew(Lease lease, Duration lockTtl) {
		return Mono.fromCallable(() -> this.delegate.renew(lease, lockTtl)).subscribeOn(this.scheduler);
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
