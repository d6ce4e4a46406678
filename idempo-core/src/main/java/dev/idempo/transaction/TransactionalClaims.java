package dev.idempo.transaction;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.TransactionalStore;

import org.springframework.core.Ordered;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Transactional mode ({@code @Idempotent(transactional = true)}): begins a transaction
 * with the application's {@link PlatformTransactionManager}, claims the key inside it on
 * the connection the transaction holds for the record table's {@link DataSource} (with
 * the {@link TransactionalStore} statements the store supplies), and lets the protected
 * work (a web handler, a method) run in it; the record is inserted in the same
 * transaction and committed with the work's writes. Shared by the web path
 * ({@code dev.idempo.web.TransactionalIdempotency}) and the method path, so it knows
 * nothing of either.
 * <p>
 * The transaction is bound to the thread that begins it, which must also end it.
 *
 * @author idempo
 */
public class TransactionalClaims {

	private static final Log logger = LogFactory.getLog(TransactionalClaims.class);

	private final Supplier<PlatformTransactionManager> transactionManagerSupplier;

	private volatile @Nullable PlatformTransactionManager transactionManager;

	private final DataSource dataSource;

	private final TransactionalStore records;

	private final int timeoutSeconds;

	private final DefaultTransactionDefinition definition;

	private final DefaultTransactionDefinition readCommittedDefinition;

	/**
	 * Whether transactions ask for {@code READ COMMITTED} explicitly: only once a claim
	 * found the database's default to be another level, because asking costs a round trip
	 * per transaction (the transaction manager reads the connection's level first).
	 */
	private volatile boolean explicitReadCommitted;

	/**
	 * Creates the transactional mode of a store.
	 * @param transactionManager the application's transaction manager; it must manage
	 * {@code dataSource}
	 * @param dataSource where the record table lives, the application's own by default
	 * @param records the statements of the store's database
	 * @param timeout the timeout of idempo's own statements
	 */
	public TransactionalClaims(PlatformTransactionManager transactionManager, DataSource dataSource,
			TransactionalStore records, Duration timeout) {
		this(() -> transactionManager, dataSource, records, timeout);
	}

	/**
	 * Creates the transactional mode of a store, with a transaction manager looked up
	 * when first needed (so that applications without transactional handlers need none).
	 * @param transactionManager supplies the application's transaction manager; it must
	 * manage {@code dataSource}
	 * @param dataSource where the record table lives, the application's own by default
	 * @param records the statements of the store's database
	 * @param timeout the timeout of idempo's own statements
	 */
	public TransactionalClaims(Supplier<PlatformTransactionManager> transactionManager, DataSource dataSource,
			TransactionalStore records, Duration timeout) {
		this.transactionManagerSupplier = transactionManager;
		this.dataSource = dataSource;
		this.records = records;
		this.timeoutSeconds = (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
		DefaultTransactionDefinition definition = new DefaultTransactionDefinition(
				TransactionDefinition.PROPAGATION_REQUIRED);
		definition.setName("idempo");
		this.definition = definition;
		DefaultTransactionDefinition readCommittedDefinition = new DefaultTransactionDefinition(definition);
		readCommittedDefinition.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
		this.readCommittedDefinition = readCommittedDefinition;
	}

	/**
	 * The store's name, for metrics.
	 * @return the name
	 */
	public String storeName() {
		return this.records.name();
	}

	/**
	 * The transaction manager, looked up on first use.
	 * @return the transaction manager
	 * @throws RuntimeException if it cannot be had
	 */
	public PlatformTransactionManager transactionManager() {
		PlatformTransactionManager transactionManager = this.transactionManager;
		if (transactionManager == null) {
			transactionManager = this.transactionManagerSupplier.get();
			this.transactionManager = transactionManager;
		}
		return transactionManager;
	}

	/**
	 * The data source of the record table, which the transaction manager must manage.
	 * @return the data source
	 */
	public DataSource dataSource() {
		return this.dataSource;
	}

	/**
	 * The statements of the store's database.
	 * @return the statements
	 */
	public TransactionalStore records() {
		return this.records;
	}

	/**
	 * The timeout of idempo's own statements, in whole seconds.
	 * @return the timeout
	 */
	public int timeoutSeconds() {
		return this.timeoutSeconds;
	}

	/**
	 * Begins the transaction and claims {@code key} in it, without waiting for another
	 * call. Unless the claim lets the work run, the transaction is rolled back before
	 * this returns; if it does, the caller ends the transaction on this thread.
	 * @param key the storage key
	 * @return the outcome
	 * @throws LockingStoreException if the database fails
	 * @throws IllegalStateException if a transaction is already active on this thread, or
	 * the transaction manager does not manage the record table's data source
	 */
	public Begun begin(String key) {
		if (TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalStateException("A transactional @Idempotent handler or method was reached inside a "
					+ "transaction; idempo must begin the transaction that its record commits with");
		}
		boolean explicit = this.explicitReadCommitted;
		Begun begun = attempt(key, explicit ? this.readCommittedDefinition : this.definition);
		if (begun != null) {
			return begun;
		}
		// the database's default isolation is not READ COMMITTED: from now on every
		// transaction asks for it
		logger.info("The database's default transaction isolation is not READ COMMITTED; transactional "
				+ "idempotent requests ask for READ COMMITTED from now on");
		this.explicitReadCommitted = true;
		begun = attempt(key, this.readCommittedDefinition);
		if (begun == null) {
			throw new LockingStoreException("The transaction of an idempotent request does not run at READ COMMITTED "
					+ "although it asked for it");
		}
		return begun;
	}

	/**
	 * Begins the transaction and claims {@code key} in it. Returns {@code null}, having
	 * rolled back, if the claim's read may have missed a record (its snapshot was taken
	 * before the lock was granted).
	 */
	private @Nullable Begun attempt(String key, TransactionDefinition definition) {
		TransactionStatus status;
		try {
			status = transactionManager().getTransaction(definition);
		}
		catch (TransactionException ex) {
			throw new LockingStoreException("Could not begin the transaction of an idempotent request", ex);
		}
		try {
			Connection connection = connection();
			String lockName = this.records.lockName(connection, key);
			if (lockName != null) {
				// before the lock is asked for: whatever happens next, it is given back
				TransactionSynchronizationManager
					.registerSynchronization(new Unlock(lockName, physical(connection), this.timeoutSeconds));
			}
			return begun(status, this.records.claim(connection, key, lockName, this.timeoutSeconds));
		}
		catch (SQLException | TransactionException ex) {
			rollbackAfterFailure(status, ex);
			throw new LockingStoreException("Could not claim an idempotency key in the transaction", ex);
		}
		catch (RuntimeException | Error ex) {
			rollbackAfterFailure(status, ex);
			throw ex;
		}
	}

	/**
	 * What a claim made in {@code status} found; the transaction is rolled back unless
	 * the work runs in it.
	 */
	private @Nullable Begun begun(TransactionStatus status, TransactionalStore.Claim claim) {
		if (claim.locked() && !claim.snapshotFollowsLock()) {
			transactionManager().rollback(status);
			return null;
		}
		if (!claim.locked()) {
			transactionManager().rollback(status);
			return Begun.BUSY;
		}
		StoredRecord record = claim.record();
		if (record != null) {
			transactionManager().rollback(status);
			return new Begun(record, null);
		}
		return new Begun(null, status);
	}

	/**
	 * The connection of the current transaction for the record table's data source.
	 * @return the connection
	 * @throws IllegalStateException if the transaction has none
	 */
	public Connection connection() {
		Object resource = TransactionSynchronizationManager.getResource(this.dataSource);
		if (!(resource instanceof ConnectionHolder holder) || holder.getConnectionHandle() == null) {
			throw new IllegalStateException("The transaction manager " + transactionManager().getClass().getName()
					+ " did not bind a connection of the DataSource that holds idempo's record table to its "
					+ "transaction: the handler's writes and the record would not commit together. Use a "
					+ "DataSourceTransactionManager or JpaTransactionManager of that DataSource");
		}
		return holder.getConnection();
	}

	/**
	 * Rolls back after {@code failure}, unless the transaction has already completed; a
	 * failure of the rollback is added to {@code failure} as suppressed.
	 * @param status the transaction
	 * @param failure what went wrong
	 */
	public void rollbackAfterFailure(TransactionStatus status, Throwable failure) {
		if (status.isCompleted()) {
			return;
		}
		try {
			transactionManager().rollback(status);
		}
		catch (RuntimeException | Error ex) {
			failure.addSuppressed(ex);
		}
	}

	/** The connection behind a pool's proxy, which is what holds a session's lock. */
	private static Connection physical(Connection connection) {
		try {
			return connection.unwrap(Connection.class);
		}
		catch (SQLException | RuntimeException ex) {
			return connection;
		}
	}

	/**
	 * The outcome of {@link #begin}: the record to replay, the transaction in which the
	 * work runs, or neither (another call holds the key).
	 *
	 * @param record the completed record, if any
	 * @param transaction the open transaction holding the claim, if the key was claimed
	 */
	public record Begun(@Nullable StoredRecord record, @Nullable TransactionStatus transaction) {

		static final Begun BUSY = new Begun(null, null);

	}

	/**
	 * Gives a MySQL lock back once its transaction has ended, before the connection goes
	 * back to its pool. If it cannot be given back on that connection, the connection is
	 * aborted, which frees the lock with its session: a lock must never go back to a pool
	 * with a connection that another request would then hold.
	 */
	private final class Unlock implements TransactionSynchronization {

		private final String lockName;

		private final Connection physical;

		private final int timeoutSeconds;

		Unlock(String lockName, Connection physical, int timeoutSeconds) {
			this.lockName = lockName;
			this.physical = physical;
			this.timeoutSeconds = timeoutSeconds;
		}

		@Override
		public int getOrder() {
			return Ordered.LOWEST_PRECEDENCE;
		}

		@Override
		public void afterCompletion(int status) {
			Object resource = TransactionSynchronizationManager.getResource(TransactionalClaims.this.dataSource);
			Connection current = (resource instanceof ConnectionHolder holder && holder.getConnectionHandle() != null)
					? holder.getConnection() : null;
			if (current == null || physical(current) != this.physical) {
				// the connection went back to its pool before the transaction's end
				// (a persistence provider that releases connections early): it may hold
				// the lock, and only ending it frees the lock for sure
				logger.warn("The connection of a transactional idempotent request was released before its "
						+ "transaction ended; aborting it to free its idempotency lock");
				abort(this.physical);
				return;
			}
			try {
				TransactionalClaims.this.records.unlock(current, this.lockName, this.timeoutSeconds);
			}
			catch (SQLException | RuntimeException ex) {
				logger.warn("Could not release an idempotency lock after its transaction; aborting the connection "
						+ "to free it", ex);
				abort(this.physical);
			}
		}

		private static void abort(Connection connection) {
			try {
				connection.abort(Runnable::run);
			}
			catch (SQLException | RuntimeException ex) {
				try {
					connection.close();
				}
				catch (SQLException | RuntimeException closeFailure) {
					logger.debug("Could not close a connection holding an idempotency lock", closeFailure);
				}
			}
		}

	}

}
