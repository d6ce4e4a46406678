package dev.idempo.store.jdbc;

import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Decides which waiting thread runs the next batch on which lock session: queues each
 * operation, lets a thread that gets a session run batches there until its own operation
 * has been taken, and hands the session on when it lets go.
 * <h2>Combining</h2> Operations are not given a session each; they queue and are run in
 * batches. A complete or release queues on the session that holds its claim's lock; a
 * claim, which may run anywhere, queues in one queue shared by all sessions. A thread
 * that queued an operation then tries to take a session (its claim's session, or for a
 * claim any free one, open ones first). If it gets one, it runs batches there
 * ({@link BatchRunner#runBatch}) until its own operation has been taken into one: each
 * batch holds the session's queued completes first, then its releases and unlocks, then
 * claims from the shared queue, all in one round trip; every operation's waiter gets its
 * outcome handed over and is woken. If it gets none, it parks: the thread that lets a
 * session go wakes the oldest waiting complete or release of that session, else the
 * oldest waiting claim ({@link #handOff}), which then takes the session. So one client
 * alone never waits for a thread hop, and under load one round trip and one durable
 * commit serve many requests. If a batch fails unexpectedly (a bug, an {@link Error}),
 * its operations are settled first; the thread that ran it then gets its own operation's
 * outcome, and an {@code Error} after that.
 * <p>
 * A waiter's deadline bounds only the wait before its operation starts: at the deadline
 * it cancels the operation if it is still queued (a compare-and-set, so no statement of
 * it was or will be sent), else it waits for the running batch, which the server's
 * statement timeout and the connection's network timeout bound. Completes never wait
 * behind claims: every batch takes all of its session's queued completes (up to a size
 * budget) before any claim.
 *
 * @author idempo
 */
final class BatchScheduler extends SessionScheduler {

	private static final Log logger = LogFactory.getLog(BatchScheduler.class);

	/**
	 * The longest a waiter parks before it looks again by itself, in case a wake-up was
	 * missed.
	 */
	private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	BatchScheduler(LockSessionPool pool, BatchRunner runner, Executor maintenance, JdbcStoreSettings settings) {
		super(pool, runner, maintenance, settings);
	}

	/**
	 * Runs a claim on whichever session takes it first.
	 * @param claim the claim
	 * @param deadline the {@link System#nanoTime()} by which it must have started
	 * @return {@code true} once it has run, {@code false} if it was cancelled unstarted
	 * at the deadline
	 */
	@Override
	boolean runClaim(Operation claim, long deadline) {
		this.pool.claims().add(claim);
		return await(claim, null, deadline);
	}

	/**
	 * Runs a complete or release on the session that holds its claim's lock.
	 * @param session the session
	 * @param operation the operation
	 * @param deadline the {@link System#nanoTime()} by which it must have started
	 * @return {@code true} once it has run, {@code false} if it was cancelled unstarted
	 * at the deadline
	 */
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
					LockSession session = (target != null) ? (target.tryRun() ? target : null) : tryRunAny();
					if (session != null) {
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
						continue;
					}
					long remaining = deadline - System.nanoTime();
					if (remaining <= 0 || interrupted || this.pool.isClosed()) {
						if (operation.cancel()) {
							queueOf(target, operation).remove(operation);
							// pass on a wake-up meant for this thread
							wakeAny();
							return false;
						}
						continue;
					}
					LockSupport.parkNanos(this, Math.min(remaining, MAX_PARK_NANOS));
				}
				else {
					// running in a batch of another thread, which wakes this one when
					// done
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

	/**
	 * Deals with an unexpected failure of a batch this thread ran (everything that batch
	 * took is settled by then). If this thread's own operation has ended, its caller gets
	 * its outcome, which may be a lock it must give back; if it never started, it is
	 * cancelled (so that no lock is ever taken for a caller that is gone) and the failure
	 * is what its caller gets; if another session's batch runs it, that batch is waited
	 * for. An {@link Error} is always passed on, after that.
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

	/**
	 * Takes a free session, open ones first (lowest first, so that a light load keeps to
	 * few connections), then one still to be opened.
	 */
	private @Nullable LockSession tryRunAny() {
		for (LockSession session : this.pool.sessions()) {
			if (session.isOpen() && session.tryRun()) {
				return session;
			}
		}
		for (LockSession session : this.pool.sessions()) {
			if (!session.isOpen() && session.tryRun()) {
				return session;
			}
		}
		return null;
	}

	/**
	 * Wakes the oldest waiting complete or release of a session that was just let go,
	 * else the oldest waiting claim, to take it.
	 */
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
