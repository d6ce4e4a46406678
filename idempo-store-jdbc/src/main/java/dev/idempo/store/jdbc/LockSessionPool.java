package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.LockingStoreException;
import dev.idempo.store.jdbc.JdbcDialect.SessionInfo;

/**
 * The lock sessions of one store and the claims waiting for any of them: opens a
 * session's connection on demand from the store's {@link DataSource}, with a new
 * generation, and discards it after freeing its locks by statement.
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

	LockSessionPool(DataSource dataSource, JdbcDialect dialect, JdbcStoreSettings settings,
			Executor networkTimeoutExecutor) {
		this.dataSource = dataSource;
		this.dialect = dialect;
		this.settings = settings;
		this.networkTimeoutExecutor = networkTimeoutExecutor;
		this.sessions = IntStream.range(0, settings.lockSessions()).mapToObj(LockSession::new).toList();
	}

	List<LockSession> sessions() {
		return this.sessions;
	}

	LockSession get(int index) {
		return this.sessions.get(index);
	}

	Queue<Operation> claims() {
		return this.claims;
	}

	boolean isClosed() {
		return this.closed;
	}

	/** Stops opening connections; open ones stay until discarded. */
	void close() {
		this.closed = true;
	}

	/** Opens the session's connection unless open; answers whether it opened one. */
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
	 * Sets the network timeout, after which the driver gives the connection up as dead.
	 */
	void setNetworkTimeout(Connection connection) throws SQLException {
		try {
			connection.setNetworkTimeout(this.networkTimeoutExecutor, (int) this.settings.networkTimeout().toMillis());
		}
		catch (SQLFeatureNotSupportedException ex) {
			// the statement timeout still bounds every statement
		}
	}

	/** Frees the session's locks by statement, then closes it; answers its generation. */
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
