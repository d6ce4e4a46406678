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

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

import org.springframework.util.Assert;

/**
 * A {@link LockingStore} on MySQL 8 or MariaDB 10.6 and later, through either JDBC driver
 * ({@code mysql-connector-j} or {@code mariadb-java-client}): a claim is a named lock
 * taken with {@code GET_LOCK(name, 0)}, a completed response is a row of the table (see
 * {@code schema-mysql.sql}).
 * <h2>Lock names</h2> Named locks are global to the server, not per database. A lock name
 * is the configured prefix ({@link #DEFAULT_LOCK_PREFIX} unless configured) followed by
 * as many hex digits of a SHA-256 digest of the current database name and the storage key
 * as fit in MySQL's limit of 64 characters (at least 128 bits), so applications in other
 * databases of the same server never share a lock, and an application's own
 * {@code GET_LOCK} names collide only if they start with the prefix.
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
 * <p>
 * How lock sessions are kept apart from the application's connection pool, and what
 * happens when one dies, is described in the {@linkplain dev.idempo.store.jdbc package
 * documentation}.
 *
 * @author idempo
 */
public final class MySqlLockingStore extends AbstractJdbcLockingStore<MySqlLockingStore.Session> {

	/** The default lock name prefix. */
	public static final String DEFAULT_LOCK_PREFIX = "idempo:";

	private static final int MAX_LOCK_NAME_LENGTH = 64;

	private static final Pattern LOCK_PREFIX = Pattern.compile("[A-Za-z0-9_.:/-]{1,32}");

	private final String lockPrefix;

	private final String probeSql;

	private final String readSql;

	private final String storeSql;

	private final String deleteExpiredSql;

	private volatile @Nullable String database;

	/**
	 * Creates a store. Lock sessions are opened from {@code dataSource} on demand and
	 * kept open, so it should not be a connection pool, least of all the application's
	 * own, and it should bound how long opening a connection may take (see the
	 * {@linkplain dev.idempo.store.jdbc package documentation}). Starts one daemon
	 * maintenance thread; {@link #close()} stops it.
	 * @param dataSource where lock sessions and cleanup connections come from
	 * @param settings the store settings
	 * @param lockPrefix the start of every lock name: 1 to 32 letters, digits or
	 * {@code _.:/-}
	 */
	public MySqlLockingStore(DataSource dataSource, JdbcStoreSettings settings, String lockPrefix) {
		super(dataSource, settings);
		Assert.isTrue(lockPrefix != null && LOCK_PREFIX.matcher(lockPrefix).matches(),
				"'lockPrefix' must be 1 to 32 letters, digits or _.:/-");
		this.lockPrefix = lockPrefix;
		String table = settings.tableName();
		String unexpired = " WHERE storage_key = ? AND expires_at > UTC_TIMESTAMP(6)";
		this.probeSql = "SELECT GET_LOCK(?, 0) FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM " + table + unexpired + ")";
		this.readSql = "SELECT fingerprint, response FROM " + table + unexpired;
		this.storeSql = "REPLACE INTO " + table + " (storage_key, fingerprint, response, created_at, expires_at)"
				+ " SELECT ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND FROM DUAL"
				+ " WHERE IS_USED_LOCK(?) = CONNECTION_ID()";
		this.deleteExpiredSql = "DELETE FROM " + table
				+ " WHERE expires_at < UTC_TIMESTAMP(6) ORDER BY expires_at LIMIT ?";
		start();
	}

	@Override
	public String name() {
		return "mysql";
	}

	/**
	 * The lock name of {@code key} in the database the lock sessions use; known once a
	 * lock session has been opened.
	 * @param key the storage key
	 * @return the lock name
	 */
	String lockName(String key) {
		String database = this.database;
		Assert.state(database != null, "No lock session opened yet");
		return lockName(database, key);
	}

	private String lockName(String database, String key) {
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
	Session openSession(Connection connection) throws SQLException {
		String product = connection.getMetaData().getDatabaseProductName();
		if (!"MySQL".equalsIgnoreCase(product) && !"MariaDB".equalsIgnoreCase(product)) {
			throw new SQLException("The mysql idempotency store needs MySQL or MariaDB, not " + product);
		}
		int timeout = settings().timeoutSeconds();
		@Nullable Object[] row = SqlPipeline.run(connection, false, timeout, new Sql("SELECT CONNECTION_ID(), DATABASE()"))
			.get(0)
			.firstRow();
		Assert.state(row != null, "CONNECTION_ID() answered nothing");
		String database = (row[1] != null) ? row[1].toString() : "";
		// the server ends the session, and frees its locks, if this instance vanishes
		// without closing it
		SqlPipeline.run(connection, false, timeout,
				new Sql("SET SESSION wait_timeout = ?", settings().sessionIdleTimeout().toSeconds()));
		this.database = database;
		return new Session(((Number) row[0]).longValue(), database, allowsMultiStatements(connection, timeout));
	}

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
	Probe probe(Connection connection, Session session, String key) throws SQLException {
		List<Result> results = SqlPipeline.run(connection, session.multiStatements(), settings().timeoutSeconds(),
				new Sql(this.probeSql, lockName(session.database(), key), key), new Sql(this.readSql, key));
		@Nullable Object[] lock = results.get(0).firstRow();
		if (lock != null && lock[0] == null) {
			throw new SQLException("GET_LOCK failed");
		}
		boolean locked = lock != null && isOne(lock[0]);
		@Nullable Object[] row = results.get(1).firstRow();
		return new Probe(locked, (row != null) ? record(row) : null);
	}

	@Override
	boolean storeAndUnlock(Connection connection, Session session, String key, StoredRecord record, Duration ttl)
			throws SQLException {
		String lockName = lockName(session.database(), key);
		long ttlMicros = ttl.toNanos() / 1000;
		List<Result> results = SqlPipeline.run(connection, session.multiStatements(), settings().timeoutSeconds(),
				new Sql(this.storeSql, key, record.fingerprint(), record.response(), ttlMicros, lockName),
				new Sql("SELECT RELEASE_LOCK(?)", lockName));
		boolean stored = results.get(0).updateCount() > 0;
		@Nullable Object[] released = results.get(1).firstRow();
		checkUnlocked(stored, released != null && isOne(released[0]));
		return stored;
	}

	@Override
	void unlockAll(Connection connection) throws SQLException {
		SqlPipeline.run(connection, false, settings().timeoutSeconds(), new Sql("SELECT RELEASE_ALL_LOCKS()"));
	}

	@Override
	boolean unlock(Connection connection, Session session, String key) throws SQLException {
		@Nullable Object[] row = SqlPipeline
			.run(connection, false, settings().timeoutSeconds(),
					new Sql("SELECT RELEASE_LOCK(?)", lockName(session.database(), key)))
			.get(0)
			.firstRow();
		return row != null && isOne(row[0]);
	}

	@Override
	int deleteExpired(Connection connection, int limit) throws SQLException {
		return (int) SqlPipeline
			.run(connection, false, settings().timeoutSeconds(), new Sql(this.deleteExpiredSql, limit))
			.get(0)
			.updateCount();
	}

	private static boolean isOne(@Nullable Object value) {
		return value instanceof Number number && number.intValue() == 1;
	}

	private static StoredRecord record(@Nullable Object[] row) throws SQLException {
		if (!(row[0] instanceof String fingerprint) || !(row[1] instanceof byte[] response)) {
			throw new SQLException("Unreadable idempotency record");
		}
		return new StoredRecord(fingerprint, response);
	}

	/**
	 * What the store knows about a lock session.
	 *
	 * @param connectionId the server's id of the session
	 * @param database the session's current database, part of every lock name
	 * @param multiStatements whether the connection accepts several statements in one
	 * round trip
	 */
	record Session(long connectionId, String database, boolean multiStatements) {

	}

}
