package dev.idempo.store.jdbc;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Decides which thread runs which operation on which lock session, and when; runs a
 * session's queued unlocks on a maintenance thread when no request is left to.
 *
 * @author idempo
 */
abstract class SessionScheduler {

	private static final Log logger = LogFactory.getLog(SessionScheduler.class);

	final LockSessionPool pool;

	final BatchRunner runner;

	private final Executor maintenance;

	final long timeoutNanos;

	SessionScheduler(LockSessionPool pool, BatchRunner runner, Executor maintenance, JdbcStoreSettings settings) {
		this.pool = pool;
		this.runner = runner;
		this.maintenance = maintenance;
		this.timeoutNanos = settings.timeout().toNanos();
	}

	/**
	 * Runs a claim on any session, on the request thread, which waits for the outcome.
	 * @return {@code false} if it was cancelled unstarted at the {@code deadline}
	 * ({@link System#nanoTime()}) or on close
	 */
	abstract boolean runClaim(Operation claim, long deadline);

	/** Runs a complete or release on its claim's session, as {@link #runClaim} does. */
	abstract boolean runOn(LockSession session, Operation operation, long deadline);

	/** Wakes who waits for a session just let go; {@code false} if nobody takes it. */
	abstract boolean wakeNext(LockSession session);

	/** Takes a free session {@code eligible} allows: open ones first, lowest first. */
	final @Nullable LockSession tryRunAny(Predicate<LockSession> eligible) {
		for (boolean open : new boolean[] { true, false }) {
			for (LockSession session : this.pool.sessions()) {
				if (session.isOpen() == open && eligible.test(session) && session.tryRun()) {
					return session;
				}
			}
		}
		return null;
	}

	/** Passes a session just let go on, or has maintenance run its queued unlocks. */
	final void handOff(LockSession session) {
		if (!wakeNext(session) && session.unlocks().isDrainDue()) {
			scheduleDrain(session);
		}
	}

	/** Ends what is queued and wakes every waiter to find the store closed. */
	final void close() {
		this.runner.close();
		this.pool.sessions().forEach(this::wakeNext);
	}

	/** Has a maintenance thread run the session's queued unlocks once it is free. */
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
				runMaintenance(session, this.timeoutNanos, this.runner::runBatch);
				// else the session check retries
			});
		}
		catch (RejectedExecutionException ex) {
			unlocks.drainStarted();
		}
	}

	/** Runs {@code task} once the session is free; logs failures (checks must go on). */
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
