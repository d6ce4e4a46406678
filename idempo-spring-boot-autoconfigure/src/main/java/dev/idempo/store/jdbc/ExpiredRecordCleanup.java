package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.idempo.store.LockingStoreException;

/**
 * Deletes expired records in bounded batches: {@code DELETE}s of at most
 * {@link JdbcStoreSettings#cleanupBatchSize()} rows, repeated while full batches come
 * back. Runs on a short-lived connection of its own, never on a lock session, in
 * {@code READ COMMITTED} (no gap locks that could deadlock with a concurrent store); a
 * batch chosen as a deadlock victim is retried once. Claims treat expired rows as absent
 * whether or not they have been deleted, so cleanup only bounds the table's size.
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

	/**
	 * Deletes expired records now.
	 * @return the number of rows deleted
	 * @throws LockingStoreException if the database cannot be reached
	 */
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

	/**
	 * Deletes at most {@code limit} expired rows on {@code connection}.
	 * @param connection the connection
	 * @param limit the most rows to delete
	 * @return the number of rows deleted
	 * @throws SQLException if the statement fails
	 */
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

	/**
	 * Deletes expired records, logging instead of throwing: the scheduled task.
	 */
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
