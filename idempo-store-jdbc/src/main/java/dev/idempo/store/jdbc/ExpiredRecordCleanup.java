package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.idempo.store.LockingStoreException;

/**
 * Deletes expired records in {@code DELETE}s of at most
 * {@link JdbcStoreSettings#cleanupBatchSize()} rows, on a connection of its own at
 * {@code READ COMMITTED}, retrying a deadlock victim once.
 *
 * @author idempo
 */
final class ExpiredRecordCleanup implements Runnable {

	private static final Log logger = LogFactory.getLog(ExpiredRecordCleanup.class);

	private static final int MAX_BATCHES = 1000;

	private final DataSource dataSource;

	private final JdbcDialect dialect;

	private final JdbcStoreSettings settings;

	private final LockSessionPool pool;

	ExpiredRecordCleanup(DataSource dataSource, JdbcDialect dialect, JdbcStoreSettings settings, LockSessionPool pool) {
		this.dataSource = dataSource;
		this.dialect = dialect;
		this.settings = settings;
		this.pool = pool;
	}

	int deleteExpiredRecords() {
		int total = 0;
		try (Connection connection = this.dataSource.getConnection()) {
			connection.setAutoCommit(true);
			this.pool.setNetworkTimeout(connection);
			connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
			for (int batch = 0; batch < MAX_BATCHES && !this.pool.isClosed(); batch++) {
				int deleted = deleteRetryingDeadlock(connection);
				total += deleted;
				if (deleted < this.settings.cleanupBatchSize()) {
					break;
				}
			}
			return total;
		}
		catch (SQLException ex) {
			throw new LockingStoreException("Could not delete expired idempotency records", ex);
		}
	}

	int deleteExpired(Connection connection, int limit) throws SQLException {
		return (int) SqlPipeline
			.run(connection, false, this.settings.timeoutSeconds(), List.of(this.dialect.deleteExpired(limit)))
			.get(0)
			.updateCount();
	}

	private int deleteRetryingDeadlock(Connection connection) throws SQLException {
		try {
			return deleteExpired(connection, this.settings.cleanupBatchSize());
		}
		catch (SQLException ex) {
			if (!JdbcDialect.isDeadlock(ex)) {
				throw ex;
			}
			logger.debug("Expired idempotency records: the delete was a deadlock victim; retrying once", ex);
			try {
				return deleteExpired(connection, this.settings.cleanupBatchSize());
			}
			catch (SQLException again) {
				again.addSuppressed(ex);
				throw again;
			}
		}
	}

	/** The scheduled task: logs instead of throwing. */
	@Override
	public void run() {
		try {
			int deleted = deleteExpiredRecords();
			if (deleted > 0 && logger.isDebugEnabled()) {
				logger.debug("Deleted " + deleted + " expired idempotency records");
			}
		}
		catch (RuntimeException ex) {
			if (!this.pool.isClosed()) {
				logger.warn("Could not delete expired idempotency records from " + this.settings.tableName()
						+ "; retrying in " + this.settings.cleanupInterval(), ex);
			}
		}
	}

}
