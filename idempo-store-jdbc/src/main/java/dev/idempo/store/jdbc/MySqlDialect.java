package dev.idempo.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Answers;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Script;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

import org.springframework.util.Assert;

/**
 * MySQL 8's and MariaDB 10.6+'s statements, through either driver: a claim is a
 * {@code GET_LOCK(name, 0)} whose name is the prefix and a SHA-256 of the database and
 * the key, a record is written only {@code WHERE IS_USED_LOCK(name) = CONNECTION_ID()},
 * and a batch is one round trip where the connection allows multi-statements. Times are
 * UTC whatever the session time zone. Why: "What the statements do" and "Lock names and
 * collisions" in {@code CONTRIBUTING.md}.
 *
 * @author idempo
 */
final class MySqlDialect extends JdbcDialect {

	private static final int MAX_LOCK_NAME_LENGTH = 64;

	private static final Pattern LOCK_PREFIX = Pattern.compile("[A-Za-z0-9_.:/-]{1,32}");

	private final String lockPrefix;

	private final String table;

	private final String claimLockSql;

	private final String storeSql;

	private final String transactionReadSql;

	private final String transactionInsertSql;

	MySqlDialect(String table, String lockPrefix) {
		Assert.isTrue(lockPrefix != null && LOCK_PREFIX.matcher(lockPrefix).matches(),
				"'lockPrefix' must be 1 to 32 letters, digits or _.:/-");
		this.lockPrefix = lockPrefix;
		this.table = table;
		this.claimLockSql = "GET_LOCK(?, 0) FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM " + table
				+ " WHERE storage_key = ? AND expires_at > UTC_TIMESTAMP(6))";
		this.storeSql = "REPLACE INTO " + table + " (storage_key, fingerprint, response, created_at, expires_at)"
				+ " SELECT ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND FROM DUAL"
				+ " WHERE IS_USED_LOCK(?) = CONNECTION_ID()";
		this.transactionReadSql = "SELECT fingerprint, response FROM " + table
				+ " WHERE storage_key = ? AND expires_at > UTC_TIMESTAMP(6)";
		this.transactionInsertSql = "REPLACE INTO " + table
				+ " (storage_key, fingerprint, response, created_at, expires_at)"
				+ " VALUES (?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)";
	}

	@Override
	String name() {
		return "mysql";
	}

	String lockName(String database, String key) {
		MessageDigest digest = SHA256.get();
		digest.update(database.getBytes(StandardCharsets.UTF_8));
		digest.update((byte) 0);
		digest.update(key.getBytes(StandardCharsets.UTF_8));
		String hex = HexFormat.of().formatHex(digest.digest());
		return this.lockPrefix + hex.substring(0, MAX_LOCK_NAME_LENGTH - this.lockPrefix.length());
	}

	@Override
	Object lockOf(SessionInfo session, String key) {
		return lockName(session.database(), key);
	}

	@Override
	SessionInfo openSession(Connection connection, JdbcStoreSettings settings) throws SQLException {
		String product = connection.getMetaData().getDatabaseProductName();
		if (!"MySQL".equalsIgnoreCase(product) && !"MariaDB".equalsIgnoreCase(product)) {
			throw new SQLException("The mysql idempotency store needs MySQL or MariaDB, not " + product);
		}
		// each statement sees what committed before it (REPEATABLE READ would not)
		connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
		int timeout = settings.timeoutSeconds();
		@Nullable Object[] row = SqlPipeline
			.run(connection, false, timeout, List.of(new Sql("SELECT CONNECTION_ID(), DATABASE(), VERSION()")))
			.get(0)
			.firstRow();
		Assert.state(row != null, "CONNECTION_ID() answered nothing");
		String database = (row[1] != null) ? row[1].toString() : "";
		boolean mariaDb = String.valueOf(row[2]).toLowerCase(Locale.ROOT).contains("mariadb");
		List<Sql> setUp = new ArrayList<>();
		// the server ends the session, freeing its locks, if this instance vanishes
		setUp.add(new Sql("SET SESSION wait_timeout = ?", settings.sessionIdleTimeout().toSeconds()));
		// every statement is bounded by the server, so none needs a client-side timer
		if (mariaDb) {
			setUp.add(new Sql("SET SESSION max_statement_time = ?", settings.timeout().toMillis() / 1000.0));
		}
		else {
			setUp.add(new Sql("SET SESSION max_execution_time = ?", settings.timeout().toMillis()));
		}
		setUp.add(new Sql("SET SESSION innodb_lock_wait_timeout = ?", timeout));
		setUp.add(new Sql("SET SESSION lock_wait_timeout = ?", timeout));
		SqlPipeline.run(connection, false, timeout, setUp);
		return new SessionInfo(((Number) row[0]).longValue(), database, allowsMultiStatements(connection, timeout));
	}

	static boolean allowsMultiStatements(Connection connection, int timeout) {
		try {
			SqlPipeline.run(connection, true, timeout, List.of(new Sql("SELECT 1"), new Sql("SELECT 2")));
			return true;
		}
		catch (SQLException ex) {
			return false;
		}
	}

	@Override
	Script batch(List<Lock> claims, List<Object> unlocks, List<Store> completes) {
		Script script = new Script();
		if (!claims.isEmpty()) {
			StringBuilder lock = new StringBuilder(claims.size() * (this.claimLockSql.length() + 24));
			Object[] lockParameters = new Object[claims.size() * 2];
			Object[] keys = new Object[claims.size()];
			for (int i = 0; i < claims.size(); i++) {
				lock.append((i > 0) ? " UNION ALL SELECT " : "SELECT ")
					.append(i)
					.append(", ")
					.append(this.claimLockSql);
				lockParameters[2 * i] = claims.get(i).lock();
				lockParameters[2 * i + 1] = claims.get(i).key();
				keys[i] = claims.get(i).key();
			}
			script.add(CLAIM_LOCK, new Sql(lock.toString(), lockParameters));
			script.add(CLAIM_READ, new Sql(unexpired("fingerprint, response, storage_key", keys.length), keys));
		}
		if (!unlocks.isEmpty()) {
			script.add(UNLOCK, unlock(unlocks));
		}
		if (!completes.isEmpty()) {
			addStores(script, completes);
		}
		return script;
	}

	/**
	 * Stores the records, then unlocks: several share one transaction and commit; one
	 * alone commits on its own (lock sessions auto-commit) when its statement ends.
	 * Either way the records are durable before the unlock runs.
	 */
	private void addStores(Script script, List<Store> completes) {
		boolean transaction = completes.size() > 1;
		if (transaction) {
			script.add(BEGIN, new Sql("START TRANSACTION"));
		}
		List<Object> locks = new ArrayList<>(completes.size());
		for (Store store : completes) {
			script.add(STORE, new Sql(this.storeSql, store.key(), store.record().fingerprint(),
					store.record().response(), store.ttlMicros(), store.lock()));
			locks.add(store.lock());
		}
		if (transaction) {
			script.add(COMMIT, new Sql("COMMIT"));
		}
		script.add(STORE_UNLOCK, unlock(locks));
	}

	@Override
	BatchAnswer readBatch(Answers answers, List<Lock> claims, int unlocks, List<Store> completes) throws SQLException {
		@Nullable Boolean[] locked = new Boolean[claims.size()];
		@Nullable StoredRecord[] records = new StoredRecord[claims.size()];
		if (!claims.isEmpty()) {
			for (@Nullable
			Object[] row : answers.one(CLAIM_LOCK).rows()) {
				int index = ((Number) row[0]).intValue();
				if (row[1] == null) {
					throw new SQLException("GET_LOCK failed");
				}
				locked[index] = isTrue(row[1]);
			}
			Map<String, StoredRecord> found = readRecords(answers.one(CLAIM_READ), 2);
			for (int i = 0; i < claims.size(); i++) {
				records[i] = found.get(claims.get(i).key());
			}
		}
		boolean[] unlocked = (unlocks > 0) ? readUnlocks(answers.one(UNLOCK), unlocks) : new boolean[0];
		boolean[] stored = new boolean[completes.size()];
		boolean[] storeUnlocked = new boolean[completes.size()];
		if (!completes.isEmpty()) {
			List<Result> stores = answers.all(STORE);
			for (int i = 0; i < completes.size(); i++) {
				stored[i] = stores.get(i).updateCount() > 0;
			}
			storeUnlocked = readUnlocks(answers.one(STORE_UNLOCK), completes.size());
		}
		return new BatchAnswer(locked, records, unlocked, stored, storeUnlocked);
	}

	@Override
	Sql heldLocks(SessionInfo session, List<Object> locks) {
		return new Sql(columns("IS_USED_LOCK(?) = CONNECTION_ID()", locks.size()), locks.toArray());
	}

	@Override
	Map<Object, Held> readHeldLocks(Result result, List<Object> locks) throws SQLException {
		@Nullable Object[] row = result.firstRow();
		if (row == null || row.length != locks.size()) {
			throw new SQLException("Unexpected answer to IS_USED_LOCK");
		}
		Map<Object, Held> held = new HashMap<>();
		for (int i = 0; i < row.length; i++) {
			held.put(locks.get(i), isTrue(row[i]) ? Held.HELD : Held.NOT_HELD);
		}
		return held;
	}

	@Override
	List<Sql> restore(List<Object> locks) {
		// IS_USED_LOCK spends nothing
		return List.of();
	}

	@Override
	Sql unlock(List<Object> locks) {
		return new Sql(columns("RELEASE_LOCK(?)", locks.size()), locks.toArray());
	}

	@Override
	boolean[] readUnlocks(Result result, int count) throws SQLException {
		@Nullable Object[] row = result.firstRow();
		if (row == null || row.length != count) {
			throw new SQLException("Unexpected answer to RELEASE_LOCK");
		}
		boolean[] unlocked = new boolean[count];
		for (int i = 0; i < count; i++) {
			unlocked[i] = isTrue(row[i]);
		}
		return unlocked;
	}

	@Override
	Sql lockHeld(String database, String key) {
		return new Sql("SELECT IS_USED_LOCK(?) IS NOT NULL", lockName(database, key));
	}

	@Override
	Sql recordWithExpiry(String key) {
		return new Sql("SELECT fingerprint, response, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) FROM "
				+ this.table + " WHERE storage_key = ? AND expires_at > UTC_TIMESTAMP(6)", key);
	}

	@Override
	Sql deleteRecord(String key) {
		return new Sql("DELETE FROM " + this.table + " WHERE storage_key = ? AND expires_at > UTC_TIMESTAMP(6)", key);
	}

	@Override
	Sql records(List<String> keys) {
		return new Sql(unexpired("storage_key, fingerprint, response", keys.size()), keys.toArray());
	}

	/** {@code columns} of the unexpired records of {@code count} keys. */
	private String unexpired(String columns, int count) {
		return "SELECT " + columns + " FROM " + this.table + " WHERE storage_key IN ("
				+ String.join(", ", Collections.nCopies(count, "?")) + ") AND expires_at > UTC_TIMESTAMP(6)";
	}

	@Override
	List<Sql> unlockAll() {
		return List.of(new Sql("SELECT RELEASE_ALL_LOCKS()"));
	}

	@Override
	Sql deleteExpired(int limit) {
		return new Sql("DELETE FROM " + this.table + " WHERE expires_at < UTC_TIMESTAMP(6) ORDER BY expires_at LIMIT ?",
				limit);
	}

	/** The lock sessions' name: the drivers know the database without a round trip. */
	@Override
	String transactionLockName(Connection connection, String key) throws SQLException {
		return lockName(currentDatabase(connection), key);
	}

	@Override
	TransactionalRecords.Claim claimInTransaction(Connection connection, String key, @Nullable String lockName,
			int timeoutSeconds) throws SQLException {
		Assert.notNull(lockName, "'lockName' is required");
		@Nullable Object[] locked = SqlPipeline
			.run(connection, false, timeoutSeconds, List.of(new Sql("SELECT GET_LOCK(?, 0)", lockName)))
			.get(0)
			.firstRow();
		if (locked == null || locked[0] == null) {
			throw new SQLException("GET_LOCK failed");
		}
		if (!isTrue(locked[0])) {
			return new TransactionalRecords.Claim(false, null, true);
		}
		// InnoDB takes the read view at this first read, whatever the isolation
		Result read = SqlPipeline.run(connection, false, timeoutSeconds, List.of(new Sql(this.transactionReadSql, key)))
			.get(0);
		return new TransactionalRecords.Claim(true, firstRecord(read), true);
	}

	@Override
	Sql insertInTransaction(String key, StoredRecord record, long ttlMicros) {
		return new Sql(this.transactionInsertSql, key, record.fingerprint(), record.response(), ttlMicros);
	}

	@Override
	Sql unlockAfterTransaction(String lockName) {
		// answers 1: released; 0: another session's; NULL: nobody's
		return new Sql("SELECT RELEASE_LOCK(?)", lockName);
	}

	/** {@code SELECT expression, expression, ...} with {@code count} columns. */
	private static String columns(String expression, int count) {
		return "SELECT " + String.join(", ", Collections.nCopies(count, expression));
	}

}
