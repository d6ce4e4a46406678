package dev.idempo.store.jdbc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

/**
 * PostgreSQL: a claim is a session-level advisory lock taken with
 * {@code pg_try_advisory_lock}, a completed response is a row of the table (see
 * {@code schema-postgresql.sql}).
 * <h2>Lock keys</h2> Locks use the two-key form {@code pg_try_advisory_lock(int, int)}:
 * the first key is a namespace ({@link JdbcLockingStore#DEFAULT_LOCK_NAMESPACE} unless
 * configured), the second the first 32 bits of a SHA-256 digest of the storage key.
 * PostgreSQL keeps the two-key space apart from the single {@code bigint} key space, so
 * the store never collides with an application (or a library such as Flyway or ShedLock)
 * that uses {@code bigint} advisory locks, nor with two-key locks in another namespace;
 * advisory locks are also per database. Two different storage keys whose 32 bits collide
 * while both are in flight share one lock: the later one may be answered "in progress"
 * until the first finishes (a spurious 409, about one in 4 billion pairs), but duplicates
 * of either key are still excluded, so a collision never runs a handler twice.
 * <h2>Statements</h2> A claim is one round trip of two statements on a lock session:
 * <pre class="code">
 * SELECT pg_try_advisory_lock(?, ?) WHERE NOT EXISTS (SELECT 1 FROM table WHERE storage_key = ? AND expires_at &gt; now());
 * SELECT fingerprint, response FROM table WHERE storage_key = ? AND expires_at &gt; now()
 * </pre> The second statement reads with a snapshot taken after the lock attempt, so a
 * response committed by an owner just before it unlocked is always seen. Completing is
 * one round trip of {@code BEGIN}, an {@code INSERT ... ON CONFLICT DO UPDATE} that only
 * writes while this session still holds the advisory lock (a granted row of
 * {@code pg_locks} for {@code pg_backend_pid()}), with {@code expires_at = now() + ttl},
 * {@code COMMIT}, and {@code pg_advisory_unlock}: the row is committed before the lock is
 * released. Releasing is {@code pg_advisory_unlock}.
 * <p>
 * Lock sessions must be real sessions: a transaction-pooling proxy such as PgBouncer in
 * {@code transaction} mode breaks session-level advisory locks (session mode is fine).
 *
 * @author idempo
 */
final class PostgresDialect extends JdbcDialect {

	private final int lockNamespace;

	private final String probeSql;

	private final String readSql;

	private final String storeSql;

	private final String deleteExpiredSql;

	PostgresDialect(String table, int lockNamespace) {
		this.lockNamespace = lockNamespace;
		String unexpired = " WHERE storage_key = ? AND expires_at > now()";
		this.probeSql = "SELECT pg_try_advisory_lock(?, ?) WHERE NOT EXISTS (SELECT 1 FROM " + table + unexpired + ")";
		this.readSql = "SELECT fingerprint, response FROM " + table + unexpired;
		this.storeSql = "INSERT INTO " + table + " (storage_key, fingerprint, response, created_at, expires_at)"
				+ " SELECT ?, ?, ?, now(), now() + ? * INTERVAL '1 microsecond' WHERE EXISTS (SELECT 1 FROM pg_locks"
				+ " WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = CAST(CAST(? AS integer) AS oid)"
				+ " AND objid = CAST(CAST(? AS integer) AS oid) AND objsubid = 2 AND granted)"
				+ " ON CONFLICT (storage_key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,"
				+ " response = EXCLUDED.response, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at";
		this.deleteExpiredSql = "DELETE FROM " + table + " WHERE storage_key IN (SELECT storage_key FROM " + table
				+ " WHERE expires_at < now() ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)";
	}

	@Override
	String name() {
		return "postgres";
	}

	int lockNamespace() {
		return this.lockNamespace;
	}

	/**
	 * The second key of the advisory lock of {@code key}; the first is the namespace.
	 * @param key the storage key
	 * @return the lock id
	 */
	int lockId(String key) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
			return ByteBuffer.wrap(digest).getInt();
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

	@Override
	boolean sameLock(String key, String otherKey) {
		return lockId(key) == lockId(otherKey);
	}

	@Override
	SessionInfo openSession(Connection connection, JdbcStoreSettings settings) throws SQLException {
		String product = connection.getMetaData().getDatabaseProductName();
		if (!"PostgreSQL".equalsIgnoreCase(product)) {
			throw new SQLException("The postgres idempotency store needs PostgreSQL, not " + product);
		}
		// each statement of a round trip must see what committed before it started
		connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
		if (connection.getMetaData().getDatabaseMajorVersion() >= 14) {
			// PostgreSQL 14+ ends the session, and frees its locks, if this instance
			// vanishes without closing it
			SqlPipeline.run(connection, true, settings.timeoutSeconds(),
					new Sql("SELECT set_config('idle_session_timeout', ?, false)",
							settings.sessionIdleTimeout().toMillis() + "ms"));
		}
		List<Result> results = SqlPipeline.run(connection, true, settings.timeoutSeconds(),
				new Sql("SELECT pg_backend_pid()"));
		Object pid = results.get(0).rows().get(0)[0];
		return new SessionInfo(((Number) pid).longValue(), "", true);
	}

	@Override
	List<Sql> claim(SessionInfo session, String key) {
		return List.of(new Sql(this.probeSql, this.lockNamespace, lockId(key), key), new Sql(this.readSql, key));
	}

	@Override
	Probe readClaim(List<Result> results) throws SQLException {
		@Nullable Object[] lock = results.get(0).firstRow();
		boolean locked = lock != null && Boolean.TRUE.equals(lock[0]);
		@Nullable Object[] row = results.get(1).firstRow();
		return new Probe(locked, (row != null) ? record(row) : null);
	}

	@Override
	List<Sql> storeAndUnlock(SessionInfo session, String key, StoredRecord record, Duration ttl) {
		long ttlMicros = ttl.toNanos() / 1000;
		return List.of(new Sql("BEGIN"), new Sql(this.storeSql, key, record.fingerprint(), record.response(), ttlMicros,
				this.lockNamespace, lockId(key)), new Sql("COMMIT"), unlock(session, key));
	}

	@Override
	Stored readStore(List<Result> results) {
		@Nullable Object[] unlocked = results.get(3).firstRow();
		return new Stored(results.get(1).updateCount() == 1, unlocked != null && Boolean.TRUE.equals(unlocked[0]));
	}

	@Override
	List<Sql> afterFailedStore() {
		// the failed statement left the explicit transaction aborted
		return List.of(new Sql("ROLLBACK"));
	}

	@Override
	Sql unlock(SessionInfo session, String key) {
		return new Sql("SELECT pg_advisory_unlock(?, ?)", this.lockNamespace, lockId(key));
	}

	@Override
	boolean readUnlock(Result result) {
		@Nullable Object[] row = result.firstRow();
		return row != null && Boolean.TRUE.equals(row[0]);
	}

	@Override
	List<Sql> unlockAll() {
		// an aborted transaction would refuse the unlock
		return List.of(new Sql("ROLLBACK"), new Sql("SELECT pg_advisory_unlock_all()"));
	}

	@Override
	Sql deleteExpired(int limit) {
		return new Sql(this.deleteExpiredSql, limit);
	}

}
