package dev.idempo.store.jdbc;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransactionRollbackException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Answers;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Script;
import dev.idempo.store.jdbc.SqlPipeline.Sql;
import dev.idempo.store.jdbc.TransactionalRecords.Claim;

/**
 * Builds one database's statements and reads their answers; it never decides what runs
 * next. A lock is an opaque reference ({@link #lockOf}), computed when a claim is sent.
 *
 * @author idempo
 */
abstract class JdbcDialect {

	static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	});

	// the steps of a batch, in this order: claims take their locks, then read the
	// records; unlocks; completes store in one transaction, then unlock

	static final String CLAIM_LOCK = "claim-lock";

	static final String CLAIM_READ = "claim-read";

	static final String UNLOCK = "unlock";

	static final String BEGIN = "begin";

	static final String STORE = "store";

	static final String COMMIT = "commit";

	static final String STORE_UNLOCK = "store-unlock";

	/** {@code postgres} or {@code mysql}, the {@code store} tag of metrics. */
	abstract String name();

	/** Checks a new lock session's database and sets its statement and idle timeouts. */
	abstract SessionInfo openSession(Connection connection, JdbcStoreSettings settings) throws SQLException;

	abstract Object lockOf(SessionInfo session, String key);

	/**
	 * The statements of one batch: a claim takes its lock unless an unexpired record
	 * exists, and reads records in a later statement (whose snapshot follows the lock); a
	 * record is stored only while the session holds its claim's lock, unlocked after the
	 * commit.
	 */
	abstract Script batch(List<Lock> claims, List<Object> unlocks, List<Store> completes);

	/** Reads what {@link #batch} answered, by step name. */
	abstract BatchAnswer readBatch(Answers answers, List<Lock> claims, int unlocks, List<Store> completes)
			throws SQLException;

	List<Sql> rollback() {
		return List.of(new Sql("ROLLBACK"));
	}

	abstract Sql heldLocks(SessionInfo session, List<Object> locks);

	abstract Map<Object, Held> readHeldLocks(Result result, List<Object> locks) throws SQLException;

	/** Gives held locks their spent store condition back ({@link Held#HELD_SPENT}). */
	abstract List<Sql> restore(List<Object> locks);

	abstract Sql unlock(List<Object> locks);

	abstract boolean[] readUnlocks(Result result, int count) throws SQLException;

	abstract Sql records(List<String> keys);

	/** Records by key, from rows of key (at {@code keyColumn}), fingerprint, response. */
	static Map<String, StoredRecord> readRecords(Result result, int keyColumn) throws SQLException {
		int fingerprint = (keyColumn == 0) ? 1 : 0;
		Map<String, StoredRecord> records = new HashMap<>();
		for (@Nullable
		Object[] row : result.rows()) {
			records.put(String.valueOf(row[keyColumn]), record(row[fingerprint], row[fingerprint + 1]));
		}
		return records;
	}

	/** Frees every lock of the session, before its connection is closed. */
	abstract List<Sql> unlockAll();

	abstract Sql deleteExpired(int limit);

	/** Whether any session holds the lock of {@code key}: one row, one column. */
	abstract Sql lockHeld(String database, String key);

	/** The unexpired record of {@code key}: fingerprint, response, micros to expiry. */
	abstract Sql recordWithExpiry(String key);

	abstract Sql deleteRecord(String key);

	// transactional mode: see TransactionalRecords

	abstract @Nullable String transactionLockName(Connection connection, String key) throws SQLException;

	abstract Claim claimInTransaction(Connection connection, String key, @Nullable String lockName, int timeoutSeconds)
			throws SQLException;

	abstract Sql insertInTransaction(String key, StoredRecord record, long ttlMicros);

	abstract @Nullable Sql unlockAfterTransaction(String lockName);

	static @Nullable StoredRecord firstRecord(Result result) throws SQLException {
		@Nullable Object[] row = result.firstRow();
		return (row != null) ? record(row[0], row[1]) : null;
	}

	static String currentDatabase(Connection connection) throws SQLException {
		String database = connection.getCatalog();
		if (database == null) {
			// MySQL Connector/J with databaseTerm=SCHEMA
			database = connection.getSchema();
		}
		return (database != null) ? database : "";
	}

	/** Whether the transaction was rolled back as a deadlock victim (worth a retry). */
	static boolean isDeadlock(SQLException ex) {
		String state = ex.getSQLState();
		// 40001: MySQL/MariaDB deadlock (error 1213); 40P01: PostgreSQL deadlock
		return ex instanceof SQLTransactionRollbackException || "40001".equals(state) || "40P01".equals(state)
				|| ex.getErrorCode() == 1213;
	}

	/** Whether the connection failed, not just a statement (anywhere in the causes). */
	static boolean isConnectionFailure(@Nullable Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLNonTransientConnectionException || cause instanceof SQLRecoverableException) {
				return true;
			}
			if (cause instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	static StoredRecord record(@Nullable Object fingerprint, @Nullable Object response) throws SQLException {
		if (!(fingerprint instanceof String text) || !(response instanceof byte[] bytes)) {
			throw new SQLException("Unreadable idempotency record");
		}
		return new StoredRecord(text, bytes);
	}

	static boolean isTrue(@Nullable Object value) {
		return Boolean.TRUE.equals(value) || (value instanceof Number number && number.intValue() == 1);
	}

	/** A lock session's server id, database (in MySQL lock names), multi-statements. */
	record SessionInfo(long connectionId, String database, boolean multiStatements) {

	}

	/** A claim in a batch. */
	record Lock(String key, Object lock) {

	}

	/** A complete in a batch. */
	record Store(String key, Object lock, StoredRecord record, long ttlMicros) {

	}

	/**
	 * What this session holds of one lock: with its store condition, without it (spent by
	 * a store that may not have committed; PostgreSQL's witness), or not at all.
	 */
	enum Held {

		HELD, HELD_SPENT, NOT_HELD

	}

	/** What a batch did per operation; a {@code null} claimLocked: a record exists. */
	record BatchAnswer(@Nullable Boolean[] claimLocked, @Nullable StoredRecord[] claimRecords, boolean[] unlocked,
			boolean[] stored, boolean[] storeUnlocked) {

	}

}
