package dev.idempo.store.jdbc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Answers;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Script;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

/**
 * PostgreSQL's statements: a claim is a session-level advisory lock {@code (namespace,
 * first 32 bits of the key's SHA-256)} with a shared "witness" lock beside it, which the
 * store statement spends as its condition ({@code pg_advisory_unlock_shared} in its
 * {@code WHERE}); every statement takes arrays. Why: "What the statements do" and "Lock
 * names and collisions" in {@code CONTRIBUTING.md}.
 *
 * @author idempo
 */
final class PostgresDialect extends JdbcDialect {

	private final int lockNamespace;

	private final String table;

	private final String claimLockSql;

	private final String claimReadSql;

	private final String unlockSql;

	private final String storeSql;

	private final String storeUnlockSql;

	private final String transactionLockSql;

	private final String transactionReadSql;

	private final String transactionInsertSql;

	PostgresDialect(String table, int lockNamespace) {
		this.lockNamespace = lockNamespace;
		this.table = table;
		String ns = Integer.toString(lockNamespace);
		String unexpired = " WHERE storage_key = c.k AND expires_at > now() LIMIT 1) r";
		this.claimLockSql = "SELECT c.n, CASE WHEN r.found IS NOT NULL THEN NULL WHEN pg_try_advisory_lock(" + ns
				+ ", c.id) THEN pg_try_advisory_lock_shared(" + ns + ", c.id) ELSE false END"
				+ " FROM unnest(?::text[], ?::int[]) WITH ORDINALITY AS c(k, id, n)"
				+ " LEFT JOIN LATERAL (SELECT 1 AS found FROM " + table + unexpired + " ON true";
		this.claimReadSql = "SELECT fingerprint, response, c.n FROM unnest(?::text[]) WITH ORDINALITY AS c(k, n)"
				+ " JOIN LATERAL (SELECT fingerprint, response FROM " + table + unexpired + " ON true";
		this.unlockSql = "SELECT u.n, pg_advisory_unlock_shared(" + ns + ", u.id), pg_advisory_unlock(" + ns
				+ ", u.id) FROM unnest(?::int[]) WITH ORDINALITY AS u(id, n)";
		this.storeSql = "INSERT INTO " + table + " (storage_key, fingerprint, response, created_at, expires_at)"
				+ " SELECT c.k, c.f, c.r, now(), now() + c.m * INTERVAL '1 microsecond'"
				+ " FROM unnest(?::text[], ?::text[], ?::bytea[], ?::bigint[], ?::int[]) AS c(k, f, r, m, id)"
				+ " WHERE pg_advisory_unlock_shared(" + ns + ", c.id)"
				+ " ON CONFLICT (storage_key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,"
				+ " response = EXCLUDED.response, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at"
				+ " RETURNING storage_key";
		this.storeUnlockSql = "SELECT u.n, pg_advisory_unlock(" + ns
				+ ", u.id) FROM unnest(?::int[]) WITH ORDINALITY AS u(id, n)";
		// the same two keys as the lock sessions' locks, released by the server when the
		// transaction ends
		this.transactionLockSql = "SELECT pg_try_advisory_xact_lock(" + ns + ", ?)";
		this.transactionReadSql = "SELECT fingerprint, response FROM " + table
				+ " WHERE storage_key = ? AND expires_at > clock_timestamp()";
		// a row of the key can only be an expired one: the lock is held and no unexpired
		// record was read
		this.transactionInsertSql = "INSERT INTO " + table
				+ " (storage_key, fingerprint, response, created_at, expires_at)"
				+ " VALUES (?, ?, ?, clock_timestamp(), clock_timestamp() + ? * INTERVAL '1 microsecond')"
				+ " ON CONFLICT (storage_key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,"
				+ " response = EXCLUDED.response, created_at = EXCLUDED.created_at,"
				+ " expires_at = EXCLUDED.expires_at";
	}

	@Override
	String name() {
		return "postgres";
	}

	int lockNamespace() {
		return this.lockNamespace;
	}

	/** The second key of the advisory lock of {@code key}; the first is the namespace. */
	static int lockId(String key) {
		return ByteBuffer.wrap(SHA256.get().digest(key.getBytes(StandardCharsets.UTF_8))).getInt();
	}

	@Override
	Object lockOf(SessionInfo session, String key) {
		return lockId(key);
	}

	@Override
	SessionInfo openSession(Connection connection, JdbcStoreSettings settings) throws SQLException {
		String product = connection.getMetaData().getDatabaseProductName();
		if (!"PostgreSQL".equalsIgnoreCase(product)) {
			throw new SQLException("The postgres idempotency store needs PostgreSQL, not " + product);
		}
		// each statement of a round trip must see what committed before it started
		connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
		int version = connection.getMetaData().getDatabaseMajorVersion();
		StringBuilder sql = new StringBuilder("SELECT pg_backend_pid(), set_config('statement_timeout', ?, false)");
		List<Object> parameters = new ArrayList<>(List.of(settings.timeout().toMillis() + "ms"));
		if (version >= 12) {
			// custom plans for array parameters would be made afresh on every execution
			sql.append(", set_config('plan_cache_mode', 'force_generic_plan', false)");
		}
		if (version >= 14) {
			// the server ends the session, freeing its locks, if this instance vanishes
			sql.append(", set_config('idle_session_timeout', ?, false)");
			parameters.add(settings.sessionIdleTimeout().toMillis() + "ms");
		}
		Sql setUp = new Sql(sql.toString(), parameters.toArray());
		@Nullable Object[] row = SqlPipeline.run(connection, true, settings.timeoutSeconds(), List.of(setUp)).get(0).firstRow();
		if (row == null) {
			throw new SQLException("pg_backend_pid() answered nothing");
		}
		return new SessionInfo(((Number) row[0]).longValue(), "", true);
	}

	@Override
	Script batch(List<Lock> claims, List<Object> unlocks, List<Store> completes) {
		Script script = new Script();
		if (!claims.isEmpty()) {
			String[] keys = new String[claims.size()];
			int[] ids = new int[claims.size()];
			for (int i = 0; i < keys.length; i++) {
				keys[i] = claims.get(i).key();
				ids[i] = (Integer) claims.get(i).lock();
			}
			script.add(CLAIM_LOCK, new Sql(this.claimLockSql, keys, ids));
			script.add(CLAIM_READ, new Sql(this.claimReadSql, (Object) keys));
		}
		if (!unlocks.isEmpty()) {
			script.add(UNLOCK, unlock(unlocks));
		}
		if (!completes.isEmpty()) {
			int count = completes.size();
			String[] keys = new String[count];
			String[] fingerprints = new String[count];
			byte[][] responses = new byte[count][];
			long[] ttls = new long[count];
			int[] ids = new int[count];
			for (int i = 0; i < count; i++) {
				Store store = completes.get(i);
				keys[i] = store.key();
				fingerprints[i] = store.record().fingerprint();
				responses[i] = store.record().response();
				ttls[i] = store.ttlMicros();
				ids[i] = (Integer) store.lock();
			}
			script.add(BEGIN, new Sql("BEGIN"));
			script.add(STORE, new Sql(this.storeSql, keys, fingerprints, responses, ttls, ids));
			script.add(COMMIT, new Sql("COMMIT"));
			script.add(STORE_UNLOCK, new Sql(this.storeUnlockSql, (Object) ids));
		}
		return script;
	}

	@Override
	BatchAnswer readBatch(Answers answers, List<Lock> claims, int unlocks, List<Store> completes) throws SQLException {
		@Nullable Boolean[] locked = new Boolean[claims.size()];
		@Nullable StoredRecord[] records = new StoredRecord[claims.size()];
		if (!claims.isEmpty()) {
			for (@Nullable
			Object[] row : answers.one(CLAIM_LOCK).rows()) {
				locked[index(row[0], claims.size())] = (row[1] != null) ? Boolean.TRUE.equals(row[1]) : null;
			}
			for (@Nullable
			Object[] row : answers.one(CLAIM_READ).rows()) {
				records[index(row[2], claims.size())] = record(row[0], row[1]);
			}
		}
		boolean[] unlocked = (unlocks > 0) ? readUnlocks(answers.one(UNLOCK), unlocks) : new boolean[0];
		boolean[] stored = new boolean[completes.size()];
		boolean[] storeUnlocked = new boolean[completes.size()];
		if (!completes.isEmpty()) {
			Map<String, Integer> positions = new HashMap<>();
			for (int i = 0; i < completes.size(); i++) {
				positions.put(completes.get(i).key(), i);
			}
			for (@Nullable
			Object[] row : answers.one(STORE).rows()) {
				Integer position = positions.get(String.valueOf(row[0]));
				if (position == null) {
					throw new SQLException("Unexpected key stored: " + row[0]);
				}
				stored[position] = true;
			}
			for (@Nullable
			Object[] row : answers.one(STORE_UNLOCK).rows()) {
				storeUnlocked[index(row[0], completes.size())] = Boolean.TRUE.equals(row[1]);
			}
		}
		return new BatchAnswer(locked, records, unlocked, stored, storeUnlocked);
	}

	@Override
	Sql heldLocks(SessionInfo session, List<Object> locks) {
		return new Sql("SELECT CAST(objid AS bigint), mode FROM pg_locks WHERE locktype = 'advisory'"
				+ " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
				+ " AND pid = pg_backend_pid() AND classid = CAST(CAST(" + this.lockNamespace + " AS integer) AS oid)"
				+ " AND objsubid = 2 AND granted");
	}

	@Override
	Map<Object, Held> readHeldLocks(Result result, List<Object> locks) throws SQLException {
		Map<Integer, Boolean> witnessed = new HashMap<>();
		for (@Nullable
		Object[] row : result.rows()) {
			int id = (int) ((Number) row[0]).longValue();
			String mode = String.valueOf(row[1]);
			if ("ExclusiveLock".equals(mode)) {
				witnessed.putIfAbsent(id, false);
			}
			else if ("ShareLock".equals(mode)) {
				witnessed.put(id, true);
			}
		}
		Map<Object, Held> held = new HashMap<>();
		for (Object lock : locks) {
			Boolean witness = witnessed.get((Integer) lock);
			held.put(lock, (witness == null) ? Held.NOT_HELD : (witness ? Held.HELD : Held.HELD_SPENT));
		}
		return held;
	}

	@Override
	List<Sql> restore(List<Object> locks) {
		return List.of(new Sql("SELECT pg_try_advisory_lock_shared(" + this.lockNamespace + ", u.id)"
				+ " FROM unnest(?::int[]) AS u(id)", (Object) ids(locks)));
	}

	@Override
	Sql unlock(List<Object> locks) {
		return new Sql(this.unlockSql, (Object) ids(locks));
	}

	@Override
	boolean[] readUnlocks(Result result, int count) throws SQLException {
		boolean[] unlocked = new boolean[count];
		for (@Nullable
		Object[] row : result.rows()) {
			// the exclusive lock is the claim's; the witness may have been spent
			unlocked[index(row[0], count)] = Boolean.TRUE.equals(row[2]);
		}
		return unlocked;
	}

	@Override
	Sql lockHeld(String database, String key) {
		return new Sql("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'"
				+ " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
				+ " AND classid = CAST(CAST(" + this.lockNamespace + " AS integer) AS oid)"
				+ " AND objid = CAST(CAST(? AS bigint) AS oid) AND objsubid = 2 AND mode = 'ExclusiveLock' AND granted)",
				lockId(key) & 0xFFFFFFFFL);
	}

	@Override
	Sql recordWithExpiry(String key) {
		return new Sql("SELECT fingerprint, response, CAST(EXTRACT(EPOCH FROM (expires_at - now())) * 1000000"
				+ " AS bigint) FROM " + this.table + " WHERE storage_key = ? AND expires_at > now()", key);
	}

	@Override
	Sql deleteRecord(String key) {
		return new Sql("DELETE FROM " + this.table + " WHERE storage_key = ? AND expires_at > now()", key);
	}

	@Override
	Sql records(List<String> keys) {
		String[] array = keys.toArray(new String[0]);
		return new Sql("SELECT storage_key, fingerprint, response FROM " + this.table
				+ " WHERE storage_key = ANY (?::text[]) AND expires_at > now()", (Object) array);
	}

	@Override
	List<Sql> unlockAll() {
		// an aborted transaction would refuse the unlock
		return List.of(new Sql("ROLLBACK"), new Sql("SELECT pg_advisory_unlock_all()"));
	}

	@Override
	Sql deleteExpired(int limit) {
		return new Sql("DELETE FROM " + this.table + " WHERE storage_key IN (SELECT storage_key FROM " + this.table
				+ " WHERE expires_at < now() ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)", limit);
	}

	@Override
	@Nullable String transactionLockName(Connection connection, String key) {
		return null;
	}

	@Override
	TransactionalRecords.Claim claimInTransaction(Connection connection, String key, @Nullable String lockName,
			int timeoutSeconds) throws SQLException {
		// one round trip: the isolation (not asked by the transaction manager, which
		// would cost a round trip), the lock, then the read, whose snapshot follows the
		// lock at READ COMMITTED
		Answers answers = new Script().add("isolation", new Sql("SELECT current_setting('transaction_isolation')"))
			.add(CLAIM_LOCK, new Sql(this.transactionLockSql, lockId(key)))
			.add(CLAIM_READ, new Sql(this.transactionReadSql, key))
			.run(connection, true, timeoutSeconds);
		@Nullable Object[] isolation = answers.one("isolation").firstRow();
		boolean readCommitted = isolation != null && "read committed".equals(isolation[0]);
		@Nullable Object[] locked = answers.one(CLAIM_LOCK).firstRow();
		if (locked == null || !isTrue(locked[0])) {
			return new TransactionalRecords.Claim(false, null, readCommitted);
		}
		return new TransactionalRecords.Claim(true, firstRecord(answers.one(CLAIM_READ)), readCommitted);
	}

	@Override
	Sql insertInTransaction(String key, StoredRecord record, long ttlMicros) {
		return new Sql(this.transactionInsertSql, key, record.fingerprint(), record.response(), ttlMicros);
	}

	@Override
	@Nullable Sql unlockAfterTransaction(String lockName) {
		return null;
	}

	private static int[] ids(List<Object> locks) {
		int[] ids = new int[locks.size()];
		for (int i = 0; i < ids.length; i++) {
			ids[i] = (Integer) locks.get(i);
		}
		return ids;
	}

	/** The 0-based position of a row from its {@code WITH ORDINALITY} number. */
	private static int index(@Nullable Object ordinality, int count) throws SQLException {
		if (!(ordinality instanceof Number number) || number.longValue() < 1 || number.longValue() > count) {
			throw new SQLException("Unexpected row number: " + ordinality);
		}
		return number.intValue() - 1;
	}

}
