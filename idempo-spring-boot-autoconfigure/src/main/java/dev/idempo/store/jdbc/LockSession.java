package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.jdbc.JdbcDialect.SessionInfo;

import org.springframework.util.Assert;

/**
 * One dedicated database session that holds the locks of in-flight requests, shared by
 * many requests. Whoever holds its run lock owns the connection (a JDBC connection runs
 * one statement at a time) and runs, in one round trip, the completes and releases queued
 * here together with claims from the pool's shared queue. Every connection it opens gets
 * a new generation number, so a claim made on a connection that has since died or been
 * replaced is recognisably lost.
 *
 * @author idempo
 */
final class LockSession {

	private final int index;

	private final ReentrantLock runLock = new ReentrantLock();

	private final Queue<Operation> completes = new ConcurrentLinkedQueue<>();

	private final Queue<Operation> releases = new ConcurrentLinkedQueue<>();

	private final UnlockQueue unlocks = new UnlockQueue();

	/** Consecutive failed pings of the open connection. */
	private int failedPings;

	private @Nullable Connection connection;

	private @Nullable SessionInfo info;

	/** The generation of the open connection; 0 while there is none. */
	private volatile long generation;

	LockSession(int index) {
		this.index = index;
	}

	int index() {
		return this.index;
	}

	/**
	 * The completes waiting for this session, oldest first.
	 * @return the queue
	 */
	Queue<Operation> completes() {
		return this.completes;
	}

	/**
	 * The releases waiting for this session, oldest first.
	 * @return the queue
	 */
	Queue<Operation> releases() {
		return this.releases;
	}

	/**
	 * The unlocks waiting for this session (no request waits for them).
	 * @return the queue
	 */
	UnlockQueue unlocks() {
		return this.unlocks;
	}

	/**
	 * Whether completes, releases or unlocks wait for this session.
	 * @return whether it has work of its own
	 */
	boolean hasWork() {
		return !this.completes.isEmpty() || !this.releases.isEmpty() || !this.unlocks.isEmpty();
	}

	/**
	 * The oldest complete or release still queued, whose waiter is woken to run the
	 * session's next batch; cancelled ones are dropped on the way.
	 * @return the operation, if any
	 */
	@Nullable Operation nextWaiting() {
		Operation complete = firstQueued(this.completes);
		return (complete != null) ? complete : firstQueued(this.releases);
	}

	private static @Nullable Operation firstQueued(Queue<Operation> queue) {
		Operation operation;
		while ((operation = queue.peek()) != null) {
			if (operation.isQueued()) {
				return operation;
			}
			queue.remove(operation);
		}
		return null;
	}

	/**
	 * Whether some thread runs this session now.
	 * @return whether its run lock is held
	 */
	boolean isRunning() {
		return this.runLock.isLocked();
	}

	/**
	 * Whether a thread waits for this session's run lock (a complete or release of a
	 * claim on it, or maintenance).
	 * @return whether some thread waits for it
	 */
	boolean isWanted() {
		return this.runLock.hasQueuedThreads();
	}

	boolean tryRun() {
		return this.runLock.tryLock();
	}

	boolean tryRun(long timeoutNanos) throws InterruptedException {
		return this.runLock.tryLock(timeoutNanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Lets go of the session; the caller then hands it on to whoever waits for it.
	 */
	void endRun() {
		this.runLock.unlock();
	}

	/**
	 * Counts a failed ping of the open connection. Requires the run lock.
	 * @return how many pings in a row have failed
	 */
	int pingFailed() {
		checkRunning();
		return ++this.failedPings;
	}

	/**
	 * Records a successful ping. Requires the run lock.
	 */
	void pingSucceeded() {
		checkRunning();
		this.failedPings = 0;
	}

	/**
	 * The generation of the open connection, readable without the run lock.
	 * @return the generation, 0 if no connection is open
	 */
	long generation() {
		return this.generation;
	}

	boolean isOpen() {
		return this.generation != 0;
	}

	/**
	 * Adopts a freshly opened connection. Requires the run lock and no open connection.
	 */
	void open(Connection connection, SessionInfo info, long generation) {
		checkRunning();
		Assert.state(this.connection == null, "Lock session already open");
		this.connection = connection;
		this.info = info;
		this.generation = generation;
	}

	Connection connection() {
		checkRunning();
		Assert.state(this.connection != null, "Lock session not open");
		return this.connection;
	}

	SessionInfo info() {
		checkRunning();
		Assert.state(this.info != null, "Lock session not open");
		return this.info;
	}

	/**
	 * Whether the open connection is dead, as opposed to merely slow: the driver closed
	 * it, or {@code failure} (if any) is a connection failure. A statement that timed out
	 * or failed on a live connection does not make it dead. Requires the run lock.
	 * @param failure what the last statement threw, if anything
	 * @return whether the connection is dead
	 */
	boolean isDead(@Nullable Throwable failure) {
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
	 * held; every claim made on it is lost. Requires the run lock. The caller frees the
	 * locks by statement first, in case the connection is not a session of its own (a
	 * pooled connection outlives {@code close()}).
	 * @return the generation that was discarded, 0 if none was open
	 */
	long discard() {
		checkRunning();
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

	private void checkRunning() {
		Assert.state(this.runLock.isHeldByCurrentThread(), "Lock session used without its run lock");
	}

	@Override
	public String toString() {
		return "lock session " + this.index;
	}

}
