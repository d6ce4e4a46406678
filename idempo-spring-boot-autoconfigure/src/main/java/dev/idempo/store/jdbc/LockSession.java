package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * One dedicated database session that holds the locks of in-flight requests, shared by
 * many requests. Its statements are serialised by an in-JVM lock: a JDBC connection runs
 * one statement at a time. Every connection it opens gets a new generation number, so a
 * claim made on a connection that has since died or been replaced is recognisably lost.
 *
 * @param <S> what the store keeps about each connection
 * @author idempo
 */
final class LockSession<S> {

	private final int index;

	private final ReentrantLock lock = new ReentrantLock();

	private @Nullable Connection connection;

	private @Nullable S state;

	/** The generation of the open connection; 0 while there is none. */
	private volatile long generation;

	LockSession(int index) {
		this.index = index;
	}

	int index() {
		return this.index;
	}

	boolean tryLock() {
		return this.lock.tryLock();
	}

	boolean tryLock(long timeoutNanos) throws InterruptedException {
		return this.lock.tryLock(timeoutNanos, TimeUnit.NANOSECONDS);
	}

	void unlock() {
		this.lock.unlock();
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
	 * Whether the open connection can no longer be used: closed, or not answering within
	 * {@code timeoutSeconds}. Requires the lock.
	 */
	boolean isBroken(int timeoutSeconds) {
		Connection connection = connection();
		try {
			return connection.isClosed() || !connection.isValid(timeoutSeconds);
		}
		catch (SQLException ex) {
			return true;
		}
	}

	/**
	 * Closes the connection, which ends the database session and so frees every lock it
	 * held; every claim made on it is lost. Requires the lock.
	 * @return the generation that was discarded, 0 if none was open
	 */
	long discard() {
		checkLocked();
		long discarded = this.generation;
		Connection connection = this.connection;
		this.generation = 0;
		this.connection = null;
		this.state = null;
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
