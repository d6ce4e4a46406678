package dev.idempo.store.jdbc;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Decides which thread runs which operation on which lock session, and when: the one
 * small interface between the store and its two ways of running operations,
 * {@link BatchScheduler} (the default: the operations of many threads combined into
 * batches, one round trip each) and {@link PlainScheduler} (each operation alone, one
 * statement per round trip). Both run a session's queued unlocks on a maintenance thread
 * when no request is left to run them.
 *
 * @author idempo
 */
abstract class SessionScheduler {

	private static final Log logger = LogFactory.getLog(SessionScheduler.class);

	final LockSessionPool pool;

	final BatchRunner runner;

	private final Executor maintenance;

	final long timeoutNanos;

	/**
	 * Creates the scheduler.
	 * @param pool the lock sessions
	 * @param runner runs operations on a session
	 * @param maintenance runs queued unlocks that no request is left to run
	 * @param settings the store settings
	 */
	SessionScheduler(LockSessionPool pool, BatchRunner runner, Executor maintenance, JdbcStoreSettings settings) {
		this.pool = pool;
		this.runner = runner;
		this.maintenance = maintenance;
		this.timeoutNanos = settings.timeout().toNanos();
	}

	/**
	 * Runs a claim on whichever session takes it first. Called on the request thread,
	 * which waits for the outcome.
	 * @param claim the claim
	 * @param deadline the {@link System#nanoTime()} by which it must have started
	 * @return {@code true} once it has run, {@code false} if it was cancelled unstarted
	 * at the deadline (or the store closed first)
	 */
	abstract boolean runClaim(Operation claim, long deadline);

	/**
	 * Runs a complete or release on the session that holds its claim's lock. Called on
	 * the request thread, which waits for the outcome.
	 * @param session the session
	 * @param operation the operation
	 * @param deadline the {@link System#nanoTime()} by which it must have started
	 * @return {@code true} once it has run, {@code false} if it was cancelled unstarted
	 * at the deadline (or the store closed first)
	 */
	abstract boolean runOn(LockSession session, Operation operation, long deadline);

	/**
	 * Wakes whoever waits for a session that was just let go.
	 * @param session the session
	 * @return whether a waiter will take it
	 */
	abstract boolean wakeNext(LockSession session);

	/**
	 * Passes a session that was just let go on to whoever needs it; if only queued
	 * unlocks are left, a maintenance task runs them.
	 * @param session the session, no longer held by the caller
	 */
	final void handOff(LockSession session) {
		if (!wakeNext(session) && session.unlocks().isDrainDue()) {
			scheduleDrain(session);
		}
	}

	/**
	 * Stops running operations: what is queued ends (see {@link BatchRunner#close}), and
	 * every waiter is woken to find the store closed.
	 */
	final void close() {
		this.runner.close();
		this.pool.sessions().forEach(this::wakeNext);
	}

	/**
	 * Has a maintenance thread run the session's queued unlocks as soon as it is free, in
	 * case no request takes it first.
	 * @param session the session
	 */
	final void scheduleDrain(LockSession session) {
		UnlockQueue unlocks = session.unlocks();
		if (this.pool.isClosed() || !unlocks.scheduleDrain()) {
			return;
		}
		try {
			this.maintenance.execute(() -> {
				unlocks.drainStarted();
				if (unlocks.isEmpty()) {
					return;
				}
				runMaintenance(session, this.timeoutNanos, this.runner::drain);
				// else the session check retries
			});
		}
		catch (RejectedExecutionException ex) {
			unlocks.drainStarted();
		}
	}

	/**
	 * Runs {@code task} on a session once it is free, waiting up to {@code timeoutNanos},
	 * then hands the session on. A failure of the task is logged, never thrown: it must
	 * not cancel a scheduled session check for good.
	 * @param session the session
	 * @param timeoutNanos how long to wait for it
	 * @param task what to run while holding it
	 */
	final void runMaintenance(LockSession session, long timeoutNanos, Consumer<LockSession> task) {
		try {
			if (!session.tryRun(timeoutNanos)) {
				return;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return;
		}
		try {
			task.accept(session);
		}
		catch (Throwable ex) {
			logger.warn("Could not maintain idempotency " + session, ex);
		}
		finally {
			session.endRun();
			handOff(session);
		}
	}

}
