package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.LockingStoreException;
import dev.idempo.store.jdbc.JdbcDialect.SessionInfo;

/**
 * The lock sessions of one store, and the claims that wait for any of them: a fixed
 * number of dedicated database sessions, opened on demand from the store's
 * {@link DataSource} (never from the application's pool) and kept open; every connection
 * gets a new generation number, and {@link #discard} closes one after freeing its locks
 * by statement. Who runs which session when is decided above it.
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

	private final Queue<Operation> claims = new ConcurrentLinkedQueue<>();

	private final AtomicLong generations = new AtomicLong();

	private volatile boolean closed;

	/**
	 * Creates the pool.
	 * @param dataSource where lock sessions come from
	 * @param dialect the database's dialect
	 * @param settings the store settings
	 * @param networkTimeoutExecutor what drivers use to abort a connection that stopped
	 * answering
	 */
	LockSessionPool(DataSource dataSource, JdbcDialect dialect, JdbcStoreSettings settings,
			Executor networkTimeoutExecutor) {
		this.dataSource = dataSource;
		this.dialect = dialect;
		this.settings = settings;
		this.networkTimeoutExecutor = networkTimeoutExecutor;
		List<LockSession> sessions = new ArrayList<>(settings.lockSessions());
		for (int i = 0; i < settings.lockSessions(); i++) {
			sessions.add(new LockSession(i));
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
	 * The claims waiting for any session, oldest first; batches take them from here.
	 * @return the queue
	 */
	Queue<Operation> claims() {
		return this.claims;
	}

	boolean isClosed() {
		return this.closed;
	}

	/**
	 * Stops opening connections; those open stay open until they are discarded.
	 */
	void close() {
		this.closed = true;
	}

	/**
	 * Opens the session's connection unless it is open. Requires the session's run lock.
	 * @param session the session
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
	 * {@code close()}, and with it its locks), then closes it. Requires the session's run
	 * lock.
	 * @param session the session
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

}
