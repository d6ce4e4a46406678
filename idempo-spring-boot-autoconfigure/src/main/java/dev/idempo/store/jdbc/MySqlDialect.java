package dev.idempo.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

import org.springframework.util.Assert;

/**
 * MySQL 8 and MariaDB 10.6 and later, through either JDBC driver
 * ({@code mysql-connector-j} or {@code mariadb-java-client}): a claim is a named lock
 * taken with {@code GET_LOCK(name, 0)}, a completed response is a row of the table (see
 * {@code schema-mysql.sql}).
 * <h2>Lock names</h2> Named locks are global to the server, not per database. A lock name
 * is the configured prefix ({@link JdbcLockingStore#DEFAULT_LOCK_PREFIX} unless
 * configured) followed by as many hex digits of a SHA-256 digest of the current database
 * name and the storage key as fit in MySQL's limit of 64 characters (at least 128 bits),
 * so applications in other databases of the same server never share a lock, and an
 * application's own {@code GET_LOCK} names collide only if they start with the prefix.
 * <h2>Statements</h2> A claim is one round trip of two statements on a lock session:
 * <pre class="code">
 * SELECT GET_LOCK(?, 0) FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM table WHERE storage_key = ? AND expires_at &gt; UTC_TIMESTAMP(6));
 * SELECT fingerprint, response FROM table WHERE storage_key = ? AND expires_at &gt; UTC_TIMESTAMP(6)
 * </pre> Each runs as its own auto-committed statement with a fresh read view, so a
 * response committed by an owner just before it unlocked is always seen. Completing is a
 * {@code REPLACE ... SELECT ... WHERE IS_USED_LOCK(?) = CONNECTION_ID()} (written only
 * while this session holds the lock; {@code expires_at = UTC_TIMESTAMP(6) + ttl})
 * followed by {@code RELEASE_LOCK}. Releasing is {@code RELEASE_LOCK}.
 * <p>
 * The statements of one operation go in one round trip when the lock session's connection
 * allows multi-statements ({@code allowMultiQueries=true}, which the auto-configuration
 * sets on the connections it derives); otherwise they run one after the other, which is
 * as correct and one round trip slower. Times are UTC whatever the session time zone.
 *
 * @author idempo
 */
final class MySqlDialect extends JdbcDialect {

	private static final int MAX_LOCK_NAME_LENGTH = 64;

	private static final Pattern LOCK_PREFIX = Pattern.compile("[A-Za-z0-9_.:/-]{1,32}");

	private final String lockPrefix;

	private final String probeSql;

	private final String readSql;

	private final String storeSql;

	private final String deleteExpiredSql;

	MySqlDialect(String table, String lockPrefix) {
		Assert.isTrue(lockPrefix != null && LOCK_PREFIX.matcher(lockPrefix).matches(),
				"'lockPrefix' must be 1 to 32 letters, digits or _.:/-");
		this.lockPrefix = lockPrefix;
		String unexpired = " WHERE storage_key = ? AND expires_at > UTC_TIMESTAMP(6)";
		this.probeSql = "SELECT GET_LOCK(?, 0) FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM " + table + unexpired + ")";
		this.readSql = "SELECT fingerprint, response FROM " + table + unexpired;
		this.storeSql = "REPLACE INTO " + table + " (storage_key, fingerprint, response, created_at, expires_at)"
				+ " SELECT ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND FROM DUAL"
				+ " WHERE IS_USED_LOCK(?) = CONNECTION_ID()";
		this.deleteExpiredSql = "DELETE FROM " + table
				+ " WHERE expires_at < UTC_TIMESTAMP(6) ORDER BY expires_at LIMIT ?";
	}

	@Override
	String name() {
		return "mysql";
	}

	/**
	 * The lock name of {@code key} in {@code database}.
	 * @param database the lock session's current database
	 * @param key the storage key
	 * @return the lock name
	 */
	String lockName(String database, String key) {
		try {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			digest.update(database.getBytes(StandardCharsets.UTF_8));
			digest.update((byte) 0);
			digest.update(key.getBytes(StandardCharsets.UTF_8));
			String hex = HexFormat.of().formatHex(digest.digest());
			return this.lockPrefix + hex.substring(0, MAX_LOCK_NAME_LENGTH - this.lockPrefix.length());
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

	@Override
	SessionInfo openSession(Connection connection, JdbcStoreSettings settings) throws SQLException {
		String product = connection.getMetaData().getDatabaseProductName();
		if (!"MySQL".equalsIgnoreCase(product) && !"MariaDB".equalsIgnoreCase(product)) {
			throw new SQLException("The mysql idempotency store needs MySQL or MariaDB, not " + product);
		}
		int timeout = settings.timeoutSeconds();
		@Nullable Object[] row = SqlPipeline.run(connection, false, timeout, new Sql("SELECT CONNECTION_ID(), DATABASE()"))
			.get(0)
			.firstRow();
		Assert.state(row != null, "CONNECTION_ID() answered nothing");
		String database = (row[1] != null) ? row[1].toString() : "";
		// the server ends the session, and frees its locks, if this instance vanishes
		// without closing it
		SqlPipeline.run(connection, false, timeout,
				new Sql("SET SESSION wait_timeout = ?", settings.sessionIdleTimeout().toSeconds()));
		return new SessionInfo(((Number) row[0]).longValue(), database, allowsMultiStatements(connection, timeout));
	}

	/**
	 * Whether {@code connection} runs several statements sent in one round trip.
	 * @param connection the connection
	 * @param timeout the statement timeout in seconds
	 * @return whether multi-statements work
	 */
	static boolean allowsMultiStatements(Connection connection, int timeout) {
		try {
			SqlPipeline.run(connection, true, timeout, new Sql("SELECT 1"), new Sql("SELECT 2"));
			return true;
		}
		catch (SQLException ex) {
			return false;
		}
	}

	@Override
	List<Sql> claim(SessionInfo session, String key) {
		return List.of(new Sql(this.probeSql, lockName(session.database(), key), key), new Sql(this.readSql, key));
	}

	@Override
	Probe readClaim(List<Result> results) throws SQLException {
		@Nullable Object[] lock = results.get(0).firstRow();
		if (lock != null && lock[0] == null) {
			throw new SQLException("GET_LOCK failed");
		}
		boolean locked = lock != null && isOne(lock[0]);
		@Nullable Object[] row = results.get(1).firstRow();
		return new Probe(locked, (row != null) ? record(row) : null);
	}

	@Override
	List<Sql> storeAndUnlock(SessionInfo session, String key, StoredRecord record, Duration ttl) {
		String lockName = lockName(session.database(), key);
		long ttlMicros = ttl.toNanos() / 1000;
		return List.of(new Sql(this.storeSql, key, record.fingerprint(), record.response(), ttlMicros, lockName),
				new Sql("SELECT RELEASE_LOCK(?)", lockName));
	}

	@Override
	Stored readStore(List<Result> results) {
		@Nullable Object[] released = results.get(1).firstRow();
		return new Stored(results.get(0).updateCount() > 0, released != null && isOne(released[0]));
	}

	@Override
	List<Sql> afterFailedStore() {
		// each statement commits on its own
		return List.of();
	}

	@Override
	Sql unlock(SessionInfo session, String key) {
		return new Sql("SELECT RELEASE_LOCK(?)", lockName(session.database(), key));
	}

	@Override
	boolean readUnlock(Result result) {
		@Nullable Object[] row = result.firstRow();
		return row != null && isOne(row[0]);
	}

	@Override
	List<Sql> unlockAll() {
		return List.of(new Sql("SELECT RELEASE_ALL_LOCKS()"));
	}

	@Override
	Sql deleteExpired(int limit) {
		return new Sql(this.deleteExpiredSql, limit);
	}

	private static boolean isOne(@Nullable Object value) {
		return value instanceof Number number && number.intValue() == 1;
	}

}
