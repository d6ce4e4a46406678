package dev.idempo.store.jdbc;

import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Combines the operations of many threads into batches: each operation queues, and a
 * thread that gets a session runs batches there until its own operation was taken, then
 * wakes the next waiter ("Combining" in {@code CONTRIBUTING.md}).
 *
 * @author idempo
 */
final class BatchScheduler extends SessionScheduler {

	private static final Log logger = LogFactory.getLog(BatchScheduler.class);

	/** The longest a waiter parks, in case a wake-up was missed. */
	private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	BatchScheduler(LockSessionPool pool, BatchRunner runner, Executor maintenance, JdbcStoreSettings settings) {
		super(pool, runner, maintenance, settings);
	}

	@Override
	boolean runClaim(Operation claim, long deadline) {
		this.pool.claims().add(claim);
		return await(claim, null, deadline);
	}

	@Override
	boolean runOn(LockSession session, Operation operation, long deadline) {
		queueOf(session, operation).add(operation);
		return await(operation, session, deadline);
	}

	private Queue<Operation> queueOf(@Nullable LockSession session, Operation operation) {
		if (session == null) {
			return this.pool.claims();
		}
		return (operation.kind == Operation.Kind.COMPLETE) ? session.completes() : session.releases();
	}

	private boolean await(Operation operation, @Nullable LockSession target, long deadline) {
		boolean interrupted = false;
		try {
			while (!operation.isDone()) {
				if (operation.isQueued()) {
					LockSession session = (target != null) ? (target.tryRun() ? target : null)
							: tryRunAny((any) -> true);
					if (session != null) {
						runUntilTaken(operation, target, session);
						continue;
					}
					long remaining = deadline - System.nanoTime();
					if (remaining <= 0 || interrupted || this.pool.isClosed()) {
						if (cancel(operation, target)) {
							return false;
						}
						continue;
					}
					LockSupport.parkNanos(this, Math.min(remaining, MAX_PARK_NANOS));
				}
				else {
					// running in another thread's batch, which wakes this one when done
					LockSupport.parkNanos(this, MAX_PARK_NANOS);
				}
				if (Thread.interrupted()) {
					interrupted = true;
				}
			}
			return true;
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** Gives up an unstarted operation, off its queue; {@code false} if started. */
	private boolean cancel(Operation operation, @Nullable LockSession target) {
		if (operation.cancel()) {
			queueOf(target, operation).remove(operation);
			// pass on a wake-up meant for this thread
			wakeAny();
			return true;
		}
		return false;
	}

	/**
	 * Runs batches on the session, which this thread holds, until the operation was taken
	 * into one, then lets the session go and wakes the next waiter.
	 */
	private void runUntilTaken(Operation operation, @Nullable LockSession target, LockSession session) {
		Throwable failure = null;
		try {
			do {
				this.runner.runBatch(session);
			}
			while (operation.isQueued());
		}
		catch (Throwable ex) {
			// a bug or a JVM failure; the batch's operations are settled
			failure = ex;
		}
		finally {
			session.endRun();
			handOff(session);
		}
		if (failure != null) {
			afterBatchFailure(operation, target, session, failure);
		}
	}

	/**
	 * After an unexpected failure of a batch this thread ran (whose operations are
	 * settled): cancels its own operation if unstarted (then throws the failure), else
	 * waits for its outcome; an {@link Error} is passed on after that.
	 */
	private void afterBatchFailure(Operation operation, @Nullable LockSession target, LockSession session,
			Throwable failure) {
		boolean cancelled = false;
		if (!operation.isDone() && operation.cancel()) {
			queueOf(target, operation).remove(operation);
			wakeAny();
			cancelled = true;
		}
		while (!cancelled && !operation.isDone()) {
			LockSupport.parkNanos(this, MAX_PARK_NANOS);
		}
		if (failure instanceof Error error) {
			throw error;
		}
		if (cancelled) {
			throw (failure instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException("A batch failed unexpectedly", failure);
		}
		logger.warn("A batch failed unexpectedly on idempotency " + session + "; its operations were settled", failure);
	}

	/** Wakes the session's oldest waiting complete or release, else the oldest claim. */
	@Override
	boolean wakeNext(LockSession session) {
		Operation next = session.nextWaiting();
		if (next != null) {
			next.wake();
			return true;
		}
		return wakeClaim();
	}

	private boolean wakeClaim() {
		Operation claim;
		while ((claim = this.pool.claims().peek()) != null) {
			if (claim.isQueued()) {
				claim.wake();
				return true;
			}
			this.pool.claims().remove(claim);
		}
		return false;
	}

	private void wakeAny() {
		for (LockSession session : this.pool.sessions()) {
			if (!session.isRunning()) {
				Operation next = session.nextWaiting();
				if (next != null) {
					next.wake();
				}
			}
		}
		wakeClaim();
	}

}
