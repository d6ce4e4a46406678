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
 * The statements of transactional mode ({@code @Idempotent(transactional = true)}): they
 * run on the connection of the application's own transaction, which the caller holds,
 * never on a lock session. A claim is a lock that cannot outlive the transaction's
 * connection and is taken without waiting, then the key's record is read in a statement
 * of its own (so that it sees everything committed before the lock was granted); the
 * record is inserted in the same transaction as the handler's writes.
 * <ul>
 * <li>PostgreSQL: {@code pg_try_advisory_xact_lock(namespace, id)}, the same two keys as
 * the lock sessions' {@code pg_try_advisory_lock}, so that transactional and other claims
 * of one key exclude each other. The server releases it when the transaction ends,
 * committed or not: {@link #lockName} is {@code null} and nothing is to be unlocked.</li>
 * <li>MySQL/MariaDB: {@code GET_LOCK(name, 0)} with the lock sessions' name (from the
 * connection's current database), a lock of the connection's session: the caller runs
 * {@link #unlock} after the commit or rollback, before the connection goes back to its
 * pool.</li>
 * </ul>
 *
 * @author idempo
 */
public final class TransactionalRecords implements TransactionalStore {

	private final boolean postgres;

	private final String lockSql;

	private final String readSql;

	private final String insertSql;

	private final @Nullable String unlockSql;

	private final @Nullable MySqlDialect mysql;

	private static final String ISOLATION_SQL = "SELECT current_setting('transaction_isolation')";

	private TransactionalRecords(boolean postgres, String table, int lockNamespace, @Nullable MySqlDialect mysql) {
		JdbcStoreSchema.checkTableName(table);
		this.postgres = postgres;
		this.mysql = mysql;
		if (postgres) {
			this.lockSql = "SELECT pg_try_advisory_xact_lock(" + lockNamespace + ", ?)";
			this.readSql = "SELECT fingerprint, response FROM " + table
					+ " WHERE storage_key = ? AND expires_at > clock_timestamp()";
			// a row of the key can only be an expired one: the lock is held and no
			// unexpired record was read
			this.insertSql = "INSERT INTO " + table + " (storage_key, fingerprint, response, created_at, expires_at)"
					+ " VALUES (?, ?, ?, clock_timestamp(), clock_timestamp() + ? * INTERVAL '1 microsecond')"
					+ " ON CONFLICT (storage_key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,"
					+ " response = EXCLUDED.response, created_at = EXCLUDED.created_at,"
					+ " expires_at = EXCLUDED.expires_at";
			this.unlockSql = null;
		}
		else {
			this.lockSql = "SELECT GET_LOCK(?, 0)";
			this.readSql = "SELECT fingerprint, response FROM " + table
					+ " WHERE storage_key = ? AND expires_at > UTC_TIMESTAMP(6)";
			this.insertSql = "REPLACE INTO " + table + " (storage_key, fingerprint, response, created_at, expires_at)"
					+ " VALUES (?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)";
			this.unlockSql = "SELECT RELEASE_LOCK(?)";
		}
	}

	/**
	 * The statements for PostgreSQL.
	 * @param table the record table
	 * @param lockNamespace the first key of the advisory locks, as the store's
	 * @return the statements
	 */
	public static TransactionalRecords postgres(String table, int lockNamespace) {
		return new TransactionalRecords(true, table, lockNamespace, null);
	}

	/**
	 * The statements for MySQL and MariaDB.
	 * @param table the record table
	 * @param lockPrefix the prefix of lock names, as the store's
	 * @return the statements
	 */
	public static TransactionalRecords mysql(String table, String lockPrefix) {
		return new TransactionalRecords(false, table, 0, new MySqlDialect(table, lockPrefix));
	}

	/**
	 * The store's name, for metrics: {@code postgres} or {@code mysql}.
	 * @return the name
	 */
	public String name() {
		return this.postgres ? "postgres" : "mysql";
	}

	/**
	 * The name of the key's lock where the lock belongs to the session rather than to the
	 * transaction (MySQL), so that the caller can arrange for its release before it is
	 * taken: the lock sessions' name, from the connection's current database (no round
	 * trip: both drivers track it).
	 * @param connection the transaction's connection
	 * @param key the storage key
	 * @return the lock name, or {@code null} where the lock ends with the transaction
	 * (PostgreSQL)
	 * @throws SQLException if the connection cannot say its database
	 */
	public @Nullable String lockName(Connection connection, String key) throws SQLException {
		MySqlDialect mysql = this.mysql;
		if (mysql == null) {
			return null;
		}
		String database = connection.getCatalog();
		if (database == null) {
			// MySQL Connector/J with databaseTerm=SCHEMA
			database = connection.getSchema();
		}
		return mysql.lockName((database != null) ? database : "", key);
	}

	/**
	 * Takes the key's lock without waiting, then reads its unexpired record. Runs inside
	 * the caller's transaction on its connection.
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
		Sql read = new Sql(this.readSql, key);
		if (this.postgres) {
			Sql lock = new Sql(this.lockSql, PostgresDialect.lockId(key));
			// one round trip: the isolation the transaction runs at (asked here rather
			// than by the transaction manager, which would cost a round trip of its
			// own), then the lock, then the read in a statement of its own, so that at
			// READ COMMITTED its snapshot follows the lock
			List<Result> results = SqlPipeline.run(connection, true, timeoutSeconds,
					List.of(new Sql(ISOLATION_SQL), lock, read));
			boolean readCommitted = "read committed".equals(results.get(0).rows().get(0)[0]);
			if (!JdbcDialect.isTrue(results.get(1).rows().get(0)[0])) {
				return new Claim(false, null, readCommitted);
			}
			return new Claim(true, record(results.get(2)), readCommitted);
		}
		Assert.notNull(lockName, "'lockName' is required");
		Result locked = SqlPipeline.run(connection, false, timeoutSeconds, List.of(new Sql(this.lockSql, lockName)))
			.get(0);
		Object granted = locked.rows().get(0)[0];
		if (granted == null) {
			throw new SQLException("GET_LOCK failed");
		}
		if (!JdbcDialect.isTrue(granted)) {
			return new Claim(false, null, true);
		}
		// InnoDB takes the read view at this first read, whatever the isolation
		return new Claim(true, record(SqlPipeline.run(connection, false, timeoutSeconds, List.of(read)).get(0)), true);
	}

	private static @Nullable StoredRecord record(Result result) throws SQLException {
		List<@Nullable Object[]> rows = result.rows();
		if (rows.isEmpty()) {
			return null;
		}
		@Nullable Object[] row = rows.get(0);
		return JdbcDialect.record(row[0], row[1]);
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
			.run(connection, false, timeoutSeconds,
					List.of(new Sql(this.insertSql, key, record.fingerprint(), record.response(), micros)))
			.get(0);
		if (result.updateCount() < 1) {
			throw new SQLException("The idempotency record was not written");
		}
	}

	/**
	 * Gives back a lock that {@link #claim} may have taken, once its transaction has
	 * ended (MySQL only). Safe whatever the claim did: a lock this session does not hold
	 * is left alone.
	 * @param connection the connection that may hold it
	 * @param lockName {@link #lockName}
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @throws SQLException if the statement fails
	 */
	public void unlock(Connection connection, String lockName, int timeoutSeconds) throws SQLException {
		String sql = this.unlockSql;
		if (sql != null) {
			// answers 1: released; 0: another session's; NULL: nobody's
			SqlPipeline.run(connection, false, timeoutSeconds, List.of(new Sql(sql, lockName)));
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
