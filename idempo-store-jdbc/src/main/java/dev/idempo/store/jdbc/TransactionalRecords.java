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
 * transaction (no {@link #lockName}); MySQL's belongs to the session, so the caller runs
 * {@link #unlock} after it, before the connection goes back to its pool.
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

	@Override
	public String name() {
		return this.dialect.name();
	}

	@Override
	public @Nullable String lockName(Connection connection, String key) throws SQLException {
		return this.dialect.transactionLockName(connection, key);
	}

	@Override
	public Claim claim(Connection connection, String key, @Nullable String lockName, int timeoutSeconds)
			throws SQLException {
		return this.dialect.claimInTransaction(connection, key, lockName, timeoutSeconds);
	}

	@Override
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

	@Override
	public void unlock(Connection connection, String lockName, int timeoutSeconds) throws SQLException {
		Sql unlock = this.dialect.unlockAfterTransaction(lockName);
		if (unlock != null) {
			SqlPipeline.run(connection, false, timeoutSeconds, List.of(unlock));
		}
	}

	/**
	 * What a claim found; on PostgreSQL the read follows the lock only at
	 * {@code READ COMMITTED}.
	 *
	 * @param locked whether the lock was taken
	 * @param record the key's unexpired record, if locked and there is one
	 * @param snapshotFollowsLock whether the read saw everything committed before the
	 * lock was granted
	 */
	public record Claim(boolean locked, @Nullable StoredRecord record,
			boolean snapshotFollowsLock) implements TransactionalStore.Claim {
	}

}
