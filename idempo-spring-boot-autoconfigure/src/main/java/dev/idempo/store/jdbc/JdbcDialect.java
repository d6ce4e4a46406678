package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransactionRollbackException;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Answers;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Script;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

/**
 * What differs between the databases a {@link JdbcLockingStore} runs on: the SQL text of
 * each step, how a lock session is set up, how a storage key becomes a lock, and how
 * errors are told apart. A dialect builds statements and reads their results; it never
 * decides what to run next, which is {@link BatchRunner}'s job.
 * <p>
 * Locks are identified by an opaque lock reference ({@link #lockOf}), computed once per
 * claim on the session that takes the lock and kept with the claim.
 *
 * @author idempo
 */
abstract class JdbcDialect {

	/** The step of a batch that takes the locks of its claims. */
	static final String CLAIM_LOCK = "claim-lock";

	/** The step of a batch that reads the records of its claims, after the locks. */
	static final String CLAIM_READ = "claim-read";

	/** The step of a batch that frees its releases' and queued unlocks' locks. */
	static final String UNLOCK = "unlock";

	/** The steps of a batch that store its completes' records, in one transaction. */
	static final String BEGIN = "begin";

	static final String STORE = "store";

	static final String COMMIT = "commit";

	/** The step of a batch that frees its completes' locks after the commit. */
	static final String STORE_UNLOCK = "store-unlock";

	/**
	 * The store name, the {@code store} tag of metrics.
	 * @return {@code postgres} or {@code mysql}
	 */
	abstract String name();

	/**
	 * Prepares a freshly opened lock session connection (already in auto-commit mode):
	 * checks the database, sets the session's statement timeout to
	 * {@link JdbcStoreSettings#timeout()} and its idle timeout to
	 * {@link JdbcStoreSettings#sessionIdleTimeout()}, and says what the store needs to
	 * know about it.
	 * @param connection the new connection
	 * @param settings the store settings
	 * @return the session's facts
	 * @throws SQLException if the connection cannot be prepared, or is to the wrong kind
	 * of database
	 */
	abstract SessionInfo openSession(Connection connection, JdbcStoreSettings settings) throws SQLException;

	/**
	 * The lock of {@code key} as taken on {@code session}.
	 * @param session the lock session
	 * @param key the storage key
	 * @return the lock reference
	 */
	abstract Object lockOf(SessionInfo session, String key);

	/**
	 * The statements of one batch, sent in one round trip, in this order: the claims
	 * (take each lock unless an unexpired record exists; then, as a separate statement
	 * that sees what committed after the lock attempts, read the records), the unlocks,
	 * and the completes (in one transaction: store each record only while this session
	 * still holds its claim's lock, commit once, then unlock).
	 * @param session the lock session
	 * @param claims the claims: storage key and lock of each
	 * @param unlocks the locks to free
	 * @param completes the completes
	 * @return the statements and how to read their answers
	 */
	abstract BatchSql batch(SessionInfo session, List<Lock> claims, List<Object> unlocks, List<Store> completes);

	/**
	 * The statements that leave no transaction open after a failed batch.
	 * @return the statements
	 */
	abstract List<Sql> rollback();

	/**
	 * The statement that says which of {@code locks} this session holds.
	 * @param session the lock session
	 * @param locks the locks
	 * @return the statement
	 */
	abstract Sql heldLocks(SessionInfo session, List<Object> locks);

	/**
	 * Reads what {@link #heldLocks} answered.
	 * @param result its result
	 * @param locks the locks asked about
	 * @return per lock asked about, what this session holds of it
	 * @throws SQLException if the answer is unreadable
	 */
	abstract Map<Object, Held> readHeldLocks(Result result, List<Object> locks) throws SQLException;

	/**
	 * The statements that give back to locks this session holds their store condition
	 * (see {@link Held#HELD_SPENT}), so that storing under them works again.
	 * @param locks the locks, all held by this session
	 * @return the statements, possibly none
	 */
	abstract List<Sql> restore(List<Object> locks);

	/**
	 * The statement that frees {@code locks} on this session, answering one row per lock
	 * in order with whether it was held; see {@link #readUnlocks}.
	 * @param locks the locks
	 * @return the statement
	 */
	abstract Sql unlock(List<Object> locks);

	/**
	 * Reads what {@link #unlock} answered.
	 * @param result its result
	 * @param count how many locks it freed
	 * @return per lock whether this session held it
	 * @throws SQLException if the answer is unreadable
	 */
	abstract boolean[] readUnlocks(Result result, int count) throws SQLException;

	/**
	 * The statement that reads the unexpired records of {@code keys}.
	 * @param keys the storage keys
	 * @return the statement
	 */
	abstract Sql records(List<String> keys);

	/**
	 * Reads what {@link #records} answered.
	 * @param result its result
	 * @return the records found, by storage key
	 * @throws SQLException if the answer is unreadable
	 */
	abstract Map<String, StoredRecord> readRecords(Result result) throws SQLException;

	/**
	 * The statements that free every lock this session holds: run before a lock session's
	 * connection is closed, because closing frees them only if the connection is a
	 * database session of its own (a pooled connection outlives {@code close()}).
	 * @return the statements
	 */
	abstract List<Sql> unlockAll();

	/**
	 * The statement that deletes at most {@code limit} expired rows.
	 * @param limit the most rows to delete
	 * @return the statement
	 */
	abstract Sql deleteExpired(int limit);

	/**
	 * For support tooling: one row, one column, whether any session holds the lock of
	 * {@code key} (a lock session's claim or a transaction's).
	 * @param database the current database of the connection that asks (MySQL lock names
	 * depend on it)
	 * @param key the storage key
	 * @return the statement
	 */
	abstract Sql lockHeld(String database, String key);

	/**
	 * For support tooling: the unexpired record of {@code key}, as one row
	 * ({@code fingerprint, response, microseconds until it expires}) or none.
	 * @param key the storage key
	 * @return the statement
	 */
	abstract Sql recordWithExpiry(String key);

	/**
	 * Deletes the unexpired record of {@code key} (an expired one is as if absent, and
	 * left to the cleanup).
	 * @param key the storage key
	 * @return the statement
	 */
	abstract Sql deleteRecord(String key);

	/**
	 * For transactional mode: the name of the key's lock where it belongs to the session
	 * rather than to the transaction, so that the caller can arrange for its release
	 * before it is taken.
	 * @param connection the transaction's connection
	 * @param key the storage key
	 * @return the lock name, or {@code null} where the lock ends with the transaction
	 * @throws SQLException if the connection cannot say its database
	 */
	abstract @Nullable String transactionLockName(Connection connection, String key) throws SQLException;

	/**
	 * For transactional mode: takes the key's lock without waiting on the caller's
	 * transaction connection, then reads its unexpired record in a statement of its own
	 * (so that it sees everything committed before the lock was granted).
	 * @param connection the transaction's connection
	 * @param key the storage key
	 * @param lockName {@link #transactionLockName}
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @return the outcome
	 * @throws SQLException if a statement fails
	 */
	abstract TransactionClaim claimInTransaction(Connection connection, String key, @Nullable String lockName,
			int timeoutSeconds) throws SQLException;

	/**
	 * For transactional mode: the statement that inserts the key's record (replacing an
	 * expired one) in the caller's transaction.
	 * @param key the storage key
	 * @param record the record
	 * @param ttlMicros its time to live in microseconds
	 * @return the statement
	 */
	abstract Sql insertInTransaction(String key, StoredRecord record, long ttlMicros);

	/**
	 * For transactional mode: the statement that gives back a lock of the session once
	 * its transaction has ended.
	 * @param lockName {@link #transactionLockName}
	 * @return the statement, or {@code null} where the lock ended with the transaction
	 */
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

	/**
	 * Whether {@code ex} says the transaction was chosen as a deadlock victim (or failed
	 * to serialise) and was rolled back, so that running it again may succeed.
	 * @param ex the failure
	 * @return whether it is a deadlock
	 */
	static boolean isDeadlock(SQLException ex) {
		String state = ex.getSQLState();
		// 40001: MySQL/MariaDB deadlock (error 1213); 40P01: PostgreSQL deadlock
		return ex instanceof SQLTransactionRollbackException || "40001".equals(state) || "40P01".equals(state)
				|| ex.getErrorCode() == 1213;
	}

	/**
	 * Whether {@code failure} says the connection itself failed, as opposed to one
	 * statement: a connection-class SQL state ({@code 08...}) or exception type anywhere
	 * in the cause chain.
	 * @param failure what a statement threw, if anything
	 * @return whether the connection failed
	 */
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

	/**
	 * What the store knows about one lock session's connection.
	 *
	 * @param connectionId the server's id of the session (PostgreSQL backend pid, MySQL
	 * connection id)
	 * @param database the session's current database, part of MySQL lock names; empty
	 * where it does not matter
	 * @param multiStatements whether the connection accepts several statements in one
	 * round trip
	 */
	record SessionInfo(long connectionId, String database, boolean multiStatements) {

	}

	/**
	 * What a transactional mode claim found.
	 *
	 * @param locked whether the lock was taken
	 * @param record the key's unexpired record, if locked and there is one
	 * @param snapshotFollowsLock whether the read saw everything committed before the
	 * lock was granted
	 */
	record TransactionClaim(boolean locked, @Nullable StoredRecord record, boolean snapshotFollowsLock) {

	}

	/**
	 * A claim in a batch.
	 *
	 * @param key the storage key
	 * @param lock its lock
	 */
	record Lock(String key, Object lock) {

	}

	/**
	 * A complete in a batch.
	 *
	 * @param key the storage key
	 * @param lock the claim's lock
	 * @param record the record to store
	 * @param ttlMicros its time to live in microseconds
	 */
	record Store(String key, Object lock, StoredRecord record, long ttlMicros) {

	}

	/**
	 * What this session holds of one lock.
	 */
	enum Held {

		/** The lock, and with it the condition that lets a record be stored under it. */
		HELD,

		/**
		 * The lock, but its store condition was spent by a store whose transaction may
		 * not have committed (PostgreSQL only; see {@link PostgresDialect}).
		 */
		HELD_SPENT,

		/** Not the lock. */
		NOT_HELD

	}

	/**
	 * The statements of one batch and how to read what they answer.
	 */
	interface BatchSql {

		/**
		 * The statements, each under its step's name ({@link #CLAIM_LOCK} and so on).
		 * @return the statements
		 */
		Script script();

		/**
		 * Reads the answers, by step name.
		 * @param answers what the statements answered
		 * @return the answers
		 * @throws SQLException if an answer is unreadable
		 */
		BatchAnswer read(Answers answers) throws SQLException;

	}

	/**
	 * What one batch did, per operation, in the order they were given.
	 *
	 * @param claimLocked per claim: {@code TRUE} if it took the lock, {@code FALSE} if
	 * another session holds it, {@code null} if an unexpired record made it not try
	 * @param claimRecords per claim: the unexpired record read after the lock attempts
	 * @param unlocked per unlock: whether the lock was held
	 * @param stored per complete: whether the record was stored
	 * @param storeUnlocked per complete: whether its unlock after the commit found the
	 * lock
	 */
	record BatchAnswer(@Nullable Boolean[] claimLocked, @Nullable StoredRecord[] claimRecords, boolean[] unlocked,
			boolean[] stored, boolean[] storeUnlocked) {

	}

}
