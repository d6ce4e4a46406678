package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

import org.springframework.util.Assert;

/**
 * The statements of transactional mode ({@code @Idempotent(transactional = true)}): they
 * run on the connection of the application's own transaction, which the caller holds,
 * never on a lock session. A claim is a lock that cannot outlive the transaction's
 * connection and is taken without waiting, then the key's record is read in a statement
 * of its own (so that under {@code READ COMMITTED} it sees everything committed before
 * the lock was granted); the record is inserted in the same transaction as the handler's
 * writes.
 * <ul>
 * <li>PostgreSQL: {@code pg_try_advisory_xact_lock(namespace, id)}, the same two keys as
 * the lock sessions' {@code pg_try_advisory_lock}, so that transactional and other claims
 * of one key exclude each other. The server releases it when the transaction ends,
 * committed or not: {@link #unlock} does nothing.</li>
 * <li>MySQL/MariaDB: {@code GET_LOCK(name, 0)} with the lock sessions' name (computed by
 * the server from the connection's database), a lock of the connection's session: the
 * caller runs {@link #unlock} after the commit or rollback, before the connection goes
 * back to its pool.</li>
 * </ul>
 *
 * @author idempo
 */
public final class TransactionalRecords {

	private final boolean postgres;

	private final String lockSql;

	private final String readSql;

	private final String insertSql;

	private final @Nullable String unlockSql;

	private final String lockPrefix;

	private TransactionalRecords(boolean postgres, String table, int lockNamespace, String lockPrefix) {
		JdbcStoreSchema.checkTableName(table);
		this.postgres = postgres;
		this.lockPrefix = lockPrefix;
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
			// the same name as MySqlDialect.lockName(DATABASE(), key), computed by the
			// server so that no round trip asks for the database first
			int hexLength = 64 - lockPrefix.length();
			this.lockSql = "SELECT GET_LOCK(n, 0), n FROM (SELECT CONCAT(?, LEFT(SHA2(CONCAT(DATABASE(), CHAR(0), ?),"
					+ " 256), " + hexLength + ")) AS n) AS l";
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
		return new TransactionalRecords(true, table, lockNamespace, "");
	}

	/**
	 * The statements for MySQL and MariaDB.
	 * @param table the record table
	 * @param lockPrefix the prefix of lock names, as the store's
	 * @return the statements
	 */
	public static TransactionalRecords mysql(String table, String lockPrefix) {
		// validates the prefix as the store does
		new MySqlDialect(table, lockPrefix);
		return new TransactionalRecords(false, table, 0, lockPrefix);
	}

	/**
	 * The store's name, for metrics: {@code postgres} or {@code mysql}.
	 * @return the name
	 */
	public String name() {
		return this.postgres ? "postgres" : "mysql";
	}

	/**
	 * Whether the lock must be released by {@link #unlock} once the transaction has ended
	 * (it is the session's, not the transaction's).
	 * @return whether {@link #unlock} is needed
	 */
	public boolean needsUnlock() {
		return this.unlockSql != null;
	}

	/**
	 * Takes the key's lock without waiting, then reads its unexpired record. Runs inside
	 * the caller's transaction on its connection.
	 * @param connection the transaction's connection
	 * @param key the storage key
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @return the outcome
	 * @throws SQLException if a statement fails
	 */
	public Claim claim(Connection connection, String key, int timeoutSeconds) throws SQLException {
		Sql lock = this.postgres ? new Sql(this.lockSql, PostgresDialect.lockId(key))
				: new Sql(this.lockSql, this.lockPrefix, key);
		Sql read = new Sql(this.readSql, key);
		if (this.postgres) {
			// one round trip: two statements, so the read's snapshot follows the lock
			List<Result> results = SqlPipeline.run(connection, true, timeoutSeconds, List.of(lock, read));
			@Nullable Object[] locked = results.get(0).rows().get(0);
			if (!JdbcDialect.isTrue(locked[0])) {
				return new Claim(false, null, null);
			}
			return new Claim(true, null, record(results.get(1)));
		}
		@Nullable Object[] locked = SqlPipeline.run(connection, false, timeoutSeconds, List.of(lock)).get(0).rows().get(0);
		String name = (String) locked[1];
		if (locked[0] == null) {
			throw new SQLException("GET_LOCK failed");
		}
		if (!JdbcDialect.isTrue(locked[0])) {
			return new Claim(false, null, null);
		}
		try {
			return new Claim(true, name,
					record(SqlPipeline.run(connection, false, timeoutSeconds, List.of(read)).get(0)));
		}
		catch (SQLException | RuntimeException ex) {
			// the caller gets no claim to unlock: give the lock back here
			try {
				unlock(connection, name, timeoutSeconds);
			}
			catch (SQLException | RuntimeException unlockFailure) {
				ex.addSuppressed(unlockFailure);
			}
			throw ex;
		}
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
		List<Object> parameters = new ArrayList<>(List.of(key, record.fingerprint(), record.response(), micros));
		Result result = SqlPipeline
			.run(connection, false, timeoutSeconds, List.of(new Sql(this.insertSql, parameters.toArray())))
			.get(0);
		if (result.updateCount() < 1) {
			throw new SQLException("The idempotency record was not written");
		}
	}

	/**
	 * Releases a lock taken by {@link #claim} once its transaction has ended (MySQL
	 * only).
	 * @param connection the connection that took it
	 * @param lockName {@link Claim#lockName()}
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @return whether the connection held it and has released it
	 * @throws SQLException if the statement fails
	 */
	public boolean unlock(Connection connection, String lockName, int timeoutSeconds) throws SQLException {
		String sql = this.unlockSql;
		if (sql == null) {
			return true;
		}
		@Nullable Object[] row = SqlPipeline.run(connection, false, timeoutSeconds, List.of(new Sql(sql, lockName)))
			.get(0)
			.rows()
			.get(0);
		return JdbcDialect.isTrue(row[0]);
	}

	/**
	 * What a claim found.
	 *
	 * @param locked whether the lock was taken (else another request holds the key)
	 * @param lockName the lock to give back after the transaction ({@link #unlock}), if
	 * any
	 * @param record the key's unexpired record, if locked and there is one
	 */
	public record Claim(boolean locked, @Nullable String lockName, @Nullable StoredRecord record) {
	}

}
