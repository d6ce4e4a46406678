package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.jdbc.JdbcDialect.SessionInfo;

import org.springframework.util.Assert;

/**
 * One dedicated database session that holds the locks of in-flight requests, shared by
 * many requests. Its statements are serialised by an in-JVM lock: a JDBC connection runs
 * one statement at a time. Every connection it opens gets a new generation number, so a
 * claim made on a connection that has since died or been replaced is recognisably lost.
 *
 * @author idempo
 */
final class LockSession {

	private final int index;

	private final ReentrantLock lock = new ReentrantLock();

	private final Runnable afterUnlock;

	private final UnlockQueue unlocks = new UnlockQueue();

	/** Consecutive failed pings of the open connection. */
	private int failedPings;

	private @Nullable Connection connection;

	private @Nullable SessionInfo info;

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
	 * The unlocks waiting for this session.
	 * @return the queue
	 */
	UnlockQueue unlocks() {
		return this.unlocks;
	}

	/**
	 * Whether a complete or release is waiting for this session: claims, which may use
	 * any session, leave it to them.
	 */
	boolean hasWaiters() {
		return this.lock.hasQueuedThreads();
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
	void open(Connection connection, SessionInfo info, long generation) {
		checkLocked();
		Assert.state(this.connection == null, "Lock session already open");
		this.connection = connection;
		this.info = info;
		this.generation = generation;
	}

	Connection connection() {
		checkLocked();
		Assert.state(this.connection != null, "Lock session not open");
		return this.connection;
	}

	SessionInfo info() {
		checkLocked();
		Assert.state(this.info != null, "Lock session not open");
		return this.info;
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
		return JdbcDialect.isConnectionFailure(failure);
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
		this.info = null;
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
