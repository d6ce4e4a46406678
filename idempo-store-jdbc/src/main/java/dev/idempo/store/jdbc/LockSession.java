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
 * One dedicated database session that holds the locks of in-flight requests: whoever
 * holds its run lock owns the connection; each connection it opens gets a new generation.
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

	Queue<Operation> completes() {
		return this.completes;
	}

	Queue<Operation> releases() {
		return this.releases;
	}

	UnlockQueue unlocks() {
		return this.unlocks;
	}

	/** The oldest complete or release still queued; cancelled ones are dropped. */
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

	boolean isRunning() {
		return this.runLock.isLocked();
	}

	boolean isWanted() {
		return this.runLock.hasQueuedThreads();
	}

	boolean tryRun() {
		return this.runLock.tryLock();
	}

	boolean tryRun(long timeoutNanos) throws InterruptedException {
		return this.runLock.tryLock(timeoutNanos, TimeUnit.NANOSECONDS);
	}

	/** Lets go of the session; the caller then hands it on. */
	void endRun() {
		this.runLock.unlock();
	}

	/** Counts a failed ping; answers how many failed in a row. */
	int pingFailed() {
		checkRunning();
		return ++this.failedPings;
	}

	void pingSucceeded() {
		checkRunning();
		this.failedPings = 0;
	}

	/** The open connection's generation, 0 if none; readable without the run lock. */
	long generation() {
		return this.generation;
	}

	boolean isOpen() {
		return this.generation != 0;
	}

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

	/** Whether the connection is dead (closed, or a connection failure), not slow. */
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

	/** Closes the connection, losing its claims; answers its generation, 0 if none. */
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
				// gone either way: the server frees its locks when it notices
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
