package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.idempo.store.LockingStoreException;
import dev.idempo.store.jdbc.JdbcDialect.SessionInfo;

/**
 * The lock sessions of one store: a fixed number of dedicated database sessions, opened
 * on demand from the store's {@link DataSource} (never from the application's pool) and
 * kept open. It hands out a session for one statement round trip at a time: any free one
 * for a claim, a given one for the complete or release of a claim made there. Every
 * connection it opens gets a new generation number; {@link #discard} closes one after
 * freeing its locks by statement.
 *
 * @author idempo
 */
final class LockSessionPool {

	private static final Log logger = LogFactory.getLog(LockSessionPool.class);

	private final DataSource dataSource;

	private final JdbcDialect dialect;

	private final JdbcStoreSettings settings;

	private final Executor networkTimeoutExecutor;

	private final List<LockSession> sessions;

	private final AtomicInteger nextSession = new AtomicInteger();

	private final AtomicLong generations = new AtomicLong();

	/** Signalled whenever a lock session is let go while someone waits for any. */
	private final Object sessionFreed = new Object();

	private final AtomicLong freedSessions = new AtomicLong();

	private final AtomicInteger waitingForSession = new AtomicInteger();

	private volatile boolean closed;

	LockSessionPool(DataSource dataSource, JdbcDialect dialect, JdbcStoreSettings settings,
			Executor networkTimeoutExecutor) {
		this.dataSource = dataSource;
		this.dialect = dialect;
		this.settings = settings;
		this.networkTimeoutExecutor = networkTimeoutExecutor;
		List<LockSession> sessions = new ArrayList<>(settings.lockSessions());
		for (int i = 0; i < settings.lockSessions(); i++) {
			sessions.add(new LockSession(i, this::sessionFreed));
		}
		this.sessions = List.copyOf(sessions);
	}

	List<LockSession> sessions() {
		return this.sessions;
	}

	LockSession get(int index) {
		return this.sessions.get(index);
	}

	/**
	 * Takes whichever lock session is free first, waiting up to {@code deadline}.
	 * Sessions that a complete or release waits for are left to them while another is
	 * free, so that new claims never starve the requests that are finishing.
	 * @param deadline the {@link System#nanoTime()} to give up at
	 * @return the session, locked by the caller
	 * @throws LockingStoreException if none was free in time
	 */
	LockSession lockAny(long deadline) {
		int count = this.sessions.size();
		this.waitingForSession.incrementAndGet();
		try {
			while (true) {
				long freed = this.freedSessions.get();
				int first = Math.floorMod(this.nextSession.getAndIncrement(), count);
				for (int pass = 0; pass < 2; pass++) {
					for (int i = 0; i < count; i++) {
						LockSession session = this.sessions.get((first + i) % count);
						if ((pass == 1 || !session.hasWaiters()) && session.tryLock()) {
							return session;
						}
					}
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					throw busy();
				}
				synchronized (this.sessionFreed) {
					if (this.freedSessions.get() == freed) {
						try {
							TimeUnit.NANOSECONDS.timedWait(this.sessionFreed, remaining);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
							throw busy();
						}
					}
				}
			}
		}
		finally {
			this.waitingForSession.decrementAndGet();
		}
	}

	private void sessionFreed() {
		if (this.waitingForSession.get() > 0) {
			synchronized (this.sessionFreed) {
				this.freedSessions.incrementAndGet();
				this.sessionFreed.notifyAll();
			}
		}
	}

	/**
	 * Takes {@code session}, waiting up to {@code deadline}.
	 * @throws LockingStoreException if it stayed busy
	 */
	void lock(LockSession session, long deadline) {
		if (!tryLock(session, deadline)) {
			throw busy();
		}
	}

	/**
	 * Takes {@code session}, waiting up to {@code deadline}.
	 * @return whether it was taken
	 */
	boolean tryLock(LockSession session, long deadline) {
		try {
			return session.tryLock(Math.max(0, deadline - System.nanoTime()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private SessionBusyException busy() {
		return new SessionBusyException("No idempotency lock session was free within " + this.settings.timeout()
				+ " (idempo.store.jdbc.timeout); consider more lock sessions (idempo.store.jdbc.lock-sessions)");
	}

	/**
	 * Opens the session's connection unless it is open. Requires the session's lock.
	 * @return whether a connection was opened
	 * @throws LockingStoreException if it cannot be opened
	 */
	boolean openIfNeeded(LockSession session) {
		if (session.isOpen()) {
			return false;
		}
		if (this.closed) {
			throw new LockingStoreException("The idempotency store is closed");
		}
		Connection connection = null;
		try {
			connection = this.dataSource.getConnection();
			connection.setAutoCommit(true);
			setNetworkTimeout(connection);
			SessionInfo info = this.dialect.openSession(connection, this.settings);
			session.open(connection, info, this.generations.incrementAndGet());
			return true;
		}
		catch (SQLException | RuntimeException ex) {
			if (connection != null) {
				try {
					connection.close();
				}
				catch (SQLException closeFailure) {
					ex.addSuppressed(closeFailure);
				}
			}
			throw (ex instanceof LockingStoreException storeException) ? storeException
					: new LockingStoreException("Could not open an idempotency lock session", ex);
		}
	}

	/**
	 * Gives a connection the network timeout, after which its driver gives it up as dead;
	 * it replaces any shorter socket timeout the connection was opened with.
	 * @param connection the connection
	 * @throws SQLException if the driver refuses
	 */
	void setNetworkTimeout(Connection connection) throws SQLException {
		try {
			connection.setNetworkTimeout(this.networkTimeoutExecutor, (int) this.settings.networkTimeout().toMillis());
		}
		catch (SQLFeatureNotSupportedException ex) {
			// the statement timeout still bounds every statement
		}
	}

	/**
	 * Frees the session's locks by statement (best effort: a pooled connection outlives
	 * {@code close()}, and with it its locks), then closes it. Requires the session's
	 * lock.
	 * @return the generation that was discarded
	 */
	long discard(LockSession session) {
		if (session.isOpen()) {
			Connection connection = session.connection();
			try {
				if (!connection.isClosed()) {
					SqlPipeline.run(connection, session.info().multiStatements(), this.settings.timeoutSeconds(),
							this.dialect.unlockAll());
				}
			}
			catch (SQLException | RuntimeException ex) {
				if (logger.isDebugEnabled()) {
					logger.debug("Could not free the locks of idempotency " + session + " before closing it", ex);
				}
			}
		}
		return session.discard();
	}

	/**
	 * Stops opening sessions and discards every open one that is free within the timeout;
	 * claims still held are lost.
	 * @param onDiscard called for each session discarded, while it is locked
	 */
	void close(Consumer<LockSession> onDiscard) {
		this.closed = true;
		for (LockSession session : this.sessions) {
			try {
				if (session.tryLock(this.settings.timeout().toNanos())) {
					try {
						discard(session);
						onDiscard.accept(session);
					}
					finally {
						session.unlock();
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	/** All lock sessions stayed busy for the whole timeout. */
	private static final class SessionBusyException extends LockingStoreException {

		SessionBusyException(String message) {
			super(message);
		}

	}

}
