package dev.idempo.store.jdbc;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Runs each operation alone on the calling thread, one statement per round trip: a claim
 * takes any free lock session (open ones first, none that a complete or release waits
 * for), a complete or release waits for its claim's session; nothing is combined and no
 * thread runs another's operation. The slower, simpler way, selected by
 * {@code idempo.store.jdbc.batching=false}, and the oracle that the batched way is tested
 * against: both must give the same outcomes.
 *
 * @author idempo
 */
final class PlainScheduler extends SessionScheduler {

	private static final Log logger = LogFactory.getLog(PlainScheduler.class);

	/**
	 * The longest a claim waits before it looks at the sessions again by itself: that a
	 * session is wanted by a complete or release is only a hint
	 * ({@link LockSession#isWanted}), and a waiter that gives up without taking the
	 * session wakes no one.
	 */
	private static final long MAX_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	/** Guards nothing but the wait for a free session. */
	private final ReentrantLock mutex = new ReentrantLock();

	private final Condition letGo = this.mutex.newCondition();

	PlainScheduler(LockSessionPool pool, BatchRunner runner, Executor maintenance, JdbcStoreSettings settings) {
		super(pool, runner, maintenance, settings);
	}

	@Override
	boolean runClaim(Operation claim, long deadline) {
		while (true) {
			LockSession session = takeAny(deadline);
			if (session == null) {
				// only this thread runs it: it is still queued
				return !claim.cancel();
			}
			run(session, claim);
			if (!claim.isQueued()) {
				return true;
			}
			// its session died under it before it did anything: once more on another
		}
	}

	@Override
	boolean runOn(LockSession session, Operation operation, long deadline) {
		boolean taken;
		try {
			taken = !this.pool.isClosed() && session.tryRun(Math.max(0, deadline - System.nanoTime()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			taken = false;
		}
		if (!taken) {
			return !operation.cancel();
		}
		run(session, operation);
		return true;
	}

	@Override
	boolean wakeNext(LockSession session) {
		this.mutex.lock();
		try {
			this.letGo.signalAll();
		}
		finally {
			this.mutex.unlock();
		}
		// a waiting complete or release is woken by the session's run lock itself
		return session.isWanted();
	}

	/**
	 * Takes a free session, open ones first, then one still to be opened, leaving alone
	 * those a complete or release waits for; waits for one to be let go until
	 * {@code deadline}.
	 */
	private @Nullable LockSession takeAny(long deadline) {
		this.mutex.lock();
		try {
			while (!this.pool.isClosed()) {
				LockSession session = tryRunAny();
				if (session != null) {
					return session;
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					return null;
				}
				this.letGo.awaitNanos(Math.min(remaining, MAX_WAIT_NANOS));
			}
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
		finally {
			this.mutex.unlock();
		}
	}

	private @Nullable LockSession tryRunAny() {
		for (LockSession session : this.pool.sessions()) {
			if (session.isOpen() && !session.isWanted() && session.tryRun()) {
				return session;
			}
		}
		for (LockSession session : this.pool.sessions()) {
			if (!session.isOpen() && !session.isWanted() && session.tryRun()) {
				return session;
			}
		}
		return null;
	}

	/**
	 * Runs the operation on a session the caller holds, then lets the session go. If it
	 * fails unexpectedly (a bug, an {@link Error}), the operation is settled first; an
	 * {@code Error} is passed on after that, and so is any failure of an operation left
	 * unstarted.
	 */
	private void run(LockSession session, Operation operation) {
		try {
			this.runner.runAlone(session, operation);
		}
		catch (RuntimeException | Error ex) {
			if (operation.isQueued() && operation.cancel()) {
				throw ex;
			}
			if (ex instanceof Error) {
				throw ex;
			}
			logger.warn("An operation failed unexpectedly on idempotency " + session + "; it was settled", ex);
		}
		finally {
			session.endRun();
			handOff(session);
		}
	}

}
