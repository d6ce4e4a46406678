package dev.idempo.store.jdbc;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Runs each operation alone on its caller's thread, one statement per round trip
 * ({@code idempo.store.jdbc.batching=false}): the oracle the batched way is tested
 * against.
 *
 * @author idempo
 */
final class PlainScheduler extends SessionScheduler {

	private static final Log logger = LogFactory.getLog(PlainScheduler.class);

	/**
	 * The longest a claim waits before it looks again: {@code isWanted} is only a hint.
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

	/** Takes a free session, open ones first, none a complete or release waits for. */
	private @Nullable LockSession takeAny(long deadline) {
		this.mutex.lock();
		try {
			while (!this.pool.isClosed()) {
				LockSession session = tryRunAny((candidate) -> !candidate.isWanted());
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

	/** Runs the operation; throws an unexpected failure if an Error or left unstarted. */
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
