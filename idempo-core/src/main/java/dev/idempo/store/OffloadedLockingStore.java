package dev.idempo.store;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
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
		// a cancel never disposes the task: interrupting a claim would lose its answer
		return ClaimHandoff.claim((handoff) -> {
			try {
				this.scheduler.schedule(() -> handoff.run(() -> this.delegate.claim(key, lockTtl)));
			}
			catch (RejectedExecutionException ex) {
				handoff.fail(ex);
			}
		}, this::releaseAbandoned);
	}

	/** Gives back a key acquired for a subscriber that had gone. */
	private void releaseAbandoned(Lease lease) {
		if (!Schedulers.isInNonBlockingThread()) {
			ClaimHandoff.releaseQuietly(this.delegate, lease, logger);
			return;
		}
		try {
			this.scheduler.schedule(() -> ClaimHandoff.releaseQuietly(this.delegate, lease, logger));
		}
		catch (RejectedExecutionException ex) {
			logger.warn("Could not release an idempotency key claimed for a cancelled request (the scheduler is "
					+ "shut down); it stays locked until its lease ends", ex);
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
