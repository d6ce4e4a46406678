package dev.idempo.store.jdbc;

import java.sql.SQLException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.idempo.store.jdbc.KeyGuard.Holder;

/**
 * The unlocks that wait for one lock session: the locks of claims that are over (their
 * complete or release could not run or failed, or a failed claim may have taken its lock)
 * but may still be held on the session. Until its unlock has run, a holder stays in the
 * {@link KeyGuard} as {@code UNLOCKING}, so its key stays taken in this JVM as it is in
 * the database. Added to without the session's lock; run, oldest first, only by whoever
 * holds it, before the session's next statement.
 *
 * @author idempo
 */
final class UnlockQueue {

	private static final Log logger = LogFactory.getLog(UnlockQueue.class);

	/** Queued unlocks that may fail in a row on a live session before it is ended. */
	private static final int MAX_FAILED_UNLOCKS = 3;

	private final Queue<Holder> pending = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean drainScheduled = new AtomicBoolean();

	// guarded by the session's lock
	private int failures;

	/**
	 * Queues the unlock of {@code holder}, which must already be {@code UNLOCKING}.
	 * @param holder the holder
	 */
	void add(Holder holder) {
		this.pending.add(holder);
	}

	boolean isEmpty() {
		return this.pending.isEmpty();
	}

	/**
	 * Runs the queued unlocks, oldest first, and forgets their holders; stops at the
	 * first one that fails on a live session (it is retried later). Requires the
	 * session's lock.
	 * @param session the lock session the unlocks belong to
	 * @param unlocker runs one unlock statement
	 * @param guard the guard the holders leave
	 * @param loss ends the session when it is dead, or when it keeps failing its unlocks
	 * (ending it is the one sure way to free its locks)
	 */
	void drain(LockSession session, Unlocker unlocker, KeyGuard guard, SessionLoss loss) {
		Holder holder;
		while ((holder = this.pending.peek()) != null) {
			if (!session.isOpen() || holder.generation() != session.generation()) {
				// its session died, and the lock with it
				this.pending.remove(holder);
				guard.forget(holder);
				continue;
			}
			try {
				boolean released = unlocker.unlock(holder);
				this.failures = 0;
				this.pending.remove(holder);
				guard.forget(holder);
				if (!released && logger.isDebugEnabled()) {
					logger.debug("A queued idempotency unlock found its lock already free on " + session);
				}
			}
			catch (SQLException | RuntimeException ex) {
				if (ex instanceof SQLException sqlException && session.isDead(sqlException)) {
					loss.lost(session, "failed while running a queued unlock", ex);
					return;
				}
				if (++this.failures >= MAX_FAILED_UNLOCKS) {
					// a live session that cannot unlock (stuck in a failed transaction,
					// say): ending it is the one sure way to free its locks
					loss.lost(session, "could not run queued unlocks", ex);
					return;
				}
				logger.warn("Could not run a queued idempotency unlock on " + session + "; retrying later", ex);
				return;
			}
		}
	}

	/**
	 * Forgets every queued unlock: the session's connection is gone, and its locks with
	 * it. Requires the session's lock.
	 * @param guard the guard the holders leave
	 */
	void clear(KeyGuard guard) {
		this.failures = 0;
		Holder holder;
		while ((holder = this.pending.poll()) != null) {
			guard.forget(holder);
		}
	}

	/**
	 * Marks that a maintenance task will drain this queue.
	 * @return {@code false} if one already will
	 */
	boolean scheduleDrain() {
		return this.drainScheduled.compareAndSet(false, true);
	}

	/**
	 * Marks that the scheduled drain task has started (or could not be scheduled).
	 */
	void drainStarted() {
		this.drainScheduled.set(false);
	}

	/**
	 * Runs one unlock statement on the session.
	 */
	interface Unlocker {

		/**
		 * Unlocks the lock of {@code holder}.
		 * @param holder the holder
		 * @return whether the session held the lock
		 * @throws SQLException if the statement fails
		 */
		boolean unlock(Holder holder) throws SQLException;

	}

	/**
	 * Ends a lock session whose locks can no longer be trusted.
	 */
	interface SessionLoss {

		void lost(LockSession session, String reason, Throwable cause);

	}

}
