package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.TransactionalStore;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

import org.springframework.util.Assert;

/**
 * Transactional mode's statements, run on the application's own transaction: a claim
 * takes the key's lock without waiting, under the lock sessions' lock name, so both kinds
 * of claim exclude each other, then reads the record in a statement of its own; the
 * record is inserted in the handler's transaction. PostgreSQL's lock ends with the
 * transaction; MySQL's belongs to the session, so the caller runs {@link #unlock} after
 * the transaction, before the connection goes back to its pool.
 *
 * @author idempo
 */
public final class TransactionalRecords implements TransactionalStore {

	private final JdbcDialect dialect;

	private TransactionalRecords(String table, JdbcDialect dialect) {
		JdbcStoreSchema.checkTableName(table);
		this.dialect = dialect;
	}

	/**
	 * The statements for PostgreSQL.
	 * @param table the record table
	 * @param lockNamespace the first key of the advisory locks, as the store's
	 * @return the statements
	 */
	public static TransactionalRecords postgres(String table, int lockNamespace) {
		return new TransactionalRecords(table, new PostgresDialect(table, lockNamespace));
	}

	/**
	 * The statements for MySQL and MariaDB.
	 * @param table the record table
	 * @param lockPrefix the prefix of lock names, as the store's
	 * @return the statements
	 */
	public static TransactionalRecords mysql(String table, String lockPrefix) {
		return new TransactionalRecords(table, new MySqlDialect(table, lockPrefix));
	}

	/**
	 * The store's name, for metrics.
	 * @return {@code postgres} or {@code mysql}
	 */
	public String name() {
		return this.dialect.name();
	}

	/**
	 * The name of the key's lock where it belongs to the session (MySQL), so that the
	 * caller can arrange for its release before it is taken.
	 * @param connection the transaction's connection
	 * @param key the storage key
	 * @return the lock name, or {@code null} where the lock ends with the transaction
	 * (PostgreSQL)
	 * @throws SQLException if the connection cannot say its database
	 */
	public @Nullable String lockName(Connection connection, String key) throws SQLException {
		return this.dialect.transactionLockName(connection, key);
	}

	/**
	 * Takes the key's lock without waiting, then reads its unexpired record.
	 * @param connection the transaction's connection
	 * @param key the storage key
	 * @param lockName {@link #lockName}
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @return the outcome
	 * @throws SQLException if a statement fails; on MySQL a lock it may have taken is
	 * given back only by {@link #unlock}
	 */
	public Claim claim(Connection connection, String key, @Nullable String lockName, int timeoutSeconds)
			throws SQLException {
		JdbcDialect.TransactionClaim claim = this.dialect.claimInTransaction(connection, key, lockName, timeoutSeconds);
		return new Claim(claim.locked(), claim.record(), claim.snapshotFollowsLock());
	}

	/**
	 * Inserts the key's record in the caller's transaction (replacing an expired one).
	 * @param connection the transaction's connection, holding the key's lock
	 * @param key the storage key
	 * @param record the record
	 * @param ttl how long it is kept
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @throws SQLException if the statement fails
	 */
	public void insert(Connection connection, String key, StoredRecord record, Duration ttl, int timeoutSeconds)
			throws SQLException {
		Assert.isTrue(!ttl.isNegative() && !ttl.isZero(), "'ttl' must be positive");
		long micros = ttl.toNanos() / 1000;
		Result result = SqlPipeline
			.run(connection, false, timeoutSeconds, List.of(this.dialect.insertInTransaction(key, record, micros)))
			.get(0);
		if (result.updateCount() < 1) {
			throw new SQLException("The idempotency record was not written");
		}
	}

	/**
	 * Gives back a lock {@link #claim} may have taken, once its transaction has ended
	 * (MySQL only); a lock this session does not hold is left alone.
	 * @param connection the connection that may hold it
	 * @param lockName {@link #lockName}
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @throws SQLException if the statement fails
	 */
	public void unlock(Connection connection, String lockName, int timeoutSeconds) throws SQLException {
		Sql unlock = this.dialect.unlockAfterTransaction(lockName);
		if (unlock != null) {
			SqlPipeline.run(connection, false, timeoutSeconds, List.of(unlock));
		}
	}

	/**
	 * What a claim found.
	 *
	 * @param locked whether the lock was taken (else another request holds the key)
	 * @param record the key's unexpired record, if locked and there is one
	 * @param snapshotFollowsLock whether the read saw everything committed before the
	 * lock was granted (PostgreSQL: only at {@code READ COMMITTED}); if not, the claim
	 * must be made again in a transaction that is
	 */
	public record Claim(boolean locked, @Nullable StoredRecord record,
			boolean snapshotFollowsLock) implements TransactionalStore.Claim {
	}

}
