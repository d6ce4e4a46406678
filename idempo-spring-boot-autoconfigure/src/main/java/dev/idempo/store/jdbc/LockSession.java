package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * One dedicated database session that holds the locks of in-flight requests, shared by
 * many requests. Its statements are serialised by an in-JVM lock: a JDBC connection runs
 * one statement at a time. Every connection it opens gets a new generation number, so a
 * claim made on a connection that has since died or been replaced is recognisably lost.
 * <p>
 * Unlocks that could not run when they were asked for (the session was busy, or the
 * statement failed on a live connection) wait in the session's queue of pending unlocks;
 * whoever takes the session next runs them before anything else.
 *
 * @param <S> what the store keeps about each connection
 * @param <P> what a pending unlock is
 * @author idempo
 */
final class LockSession<S, P> {

	private final int index;

	private final ReentrantLock lock = new ReentrantLock();

	private final Runnable afterUnlock;

	private final Queue<P> pendingUnlocks = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean drainScheduled = new AtomicBoolean();

	/** Consecutive failed pings of the open connection. */
	private int failedPings;

	// guarded by lock
	private int failedUnlocks;

	private @Nullable Connection connection;

	private @Nullable S state;

	/** The generation of the open connection; 0 while there is none. */
	private volatile long generation;

	LockSession(int index, Runnable afterUnlock) {
		this.index = index;
		this.afterUnlock = afterUnlock;
	}

	int index() {
		return this.index;
	}

	/**
	 * Whether a complete or release is waiting for this session: claims, which may use
	 * any session, leave it to them.
	 */
	boolean hasWaiters() {
		return this.lock.hasQueuedThreads();
	}

	/**
	 * Counts a queued unlock that failed on this live session.
	 * @return how many failed in a row
	 */
	int unlockFailed() {
		return ++this.failedUnlocks;
	}

	void unlockSucceeded() {
		this.failedUnlocks = 0;
	}

	boolean tryLock() {
		return this.lock.tryLock();
	}

	boolean tryLock(long timeoutNanos) throws InterruptedException {
		return this.lock.tryLock(timeoutNanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Lets go of the session and tells whoever waits for any free session.
	 */
	void unlock() {
		this.lock.unlock();
		this.afterUnlock.run();
	}

	/**
	 * The unlocks that wait for this session, oldest first; added to without the lock,
	 * run and removed only with it.
	 * @return the queue
	 */
	Queue<P> pendingUnlocks() {
		return this.pendingUnlocks;
	}

	/**
	 * The flag that keeps at most one maintenance task waiting to run this session's
	 * pending unlocks.
	 * @return the flag
	 */
	AtomicBoolean drainScheduled() {
		return this.drainScheduled;
	}

	/**
	 * Counts a failed ping of the open connection. Requires the lock.
	 * @return how many pings in a row have failed
	 */
	int pingFailed() {
		checkLocked();
		return ++this.failedPings;
	}

	/**
	 * Records a successful ping. Requires the lock.
	 */
	void pingSucceeded() {
		checkLocked();
		this.failedPings = 0;
	}

	/**
	 * The generation of the open connection, readable without the lock.
	 * @return the generation, 0 if no connection is open
	 */
	long generation() {
		return this.generation;
	}

	boolean isOpen() {
		return this.generation != 0;
	}

	/**
	 * Adopts a freshly opened connection. Requires the lock and no open connection.
	 */
	void open(Connection connection, S state, long generation) {
		checkLocked();
		Assert.state(this.connection == null, "Lock session already open");
		this.connection = connection;
		this.state = state;
		this.generation = generation;
	}

	Connection connection() {
		checkLocked();
		Assert.state(this.connection != null, "Lock session not open");
		return this.connection;
	}

	S state() {
		checkLocked();
		Assert.state(this.state != null, "Lock session not open");
		return this.state;
	}

	/**
	 * Whether the open connection is dead, as opposed to merely slow: the driver closed
	 * it, or {@code failure} (if any) is a connection failure. A statement that timed out
	 * or failed on a live connection does not make it dead. Requires the lock.
	 * @param failure what the last statement threw, if anything
	 * @return whether the connection is dead
	 */
	boolean isDead(@Nullable SQLException failure) {
		Connection connection = connection();
		try {
			if (connection.isClosed()) {
				return true;
			}
		}
		catch (SQLException ex) {
			return true;
		}
		return isConnectionFailure(failure);
	}

	static boolean isConnectionFailure(@Nullable Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLNonTransientConnectionException || cause instanceof SQLRecoverableException) {
				return true;
			}
			if (cause instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	/**
	 * Closes the connection, which ends the database session and so frees every lock it
	 * held; every claim made on it is lost. Requires the lock. The caller frees the locks
	 * by statement first, in case the connection is not a session of its own (a pooled
	 * connection outlives {@code close()}).
	 * @return the generation that was discarded, 0 if none was open
	 */
	long discard() {
		checkLocked();
		long discarded = this.generation;
		Connection connection = this.connection;
		this.generation = 0;
		this.connection = null;
		this.state = null;
		this.failedPings = 0;
		if (connection != null) {
			try {
				connection.close();
			}
			catch (SQLException | RuntimeException ex) {
				// the session is gone either way: the server frees its locks when it
				// notices
			}
		}
		return discarded;
	}

	private void checkLocked() {
		Assert.state(this.lock.isHeldByCurrentThread(), "Lock session used without its lock");
	}

	@Override
	public String toString() {
		return "lock session " + this.index;
	}

}
