package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransactionRollbackException;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

/**
 * What differs between the databases a {@link JdbcLockingStore} runs on: the SQL text of
 * each operation, how a lock session is set up, how a storage key becomes a lock, and how
 * errors are told apart. A dialect builds statements and reads their results; it never
 * decides what to run next, which is {@link JdbcLockingStore}'s job.
 *
 * @author idempo
 */
abstract sealed class JdbcDialect permits PostgresDialect, MySqlDialect {

	/**
	 * The store name, the {@code store} tag of metrics.
	 * @return {@code postgres} or {@code mysql}
	 */
	abstract String name();

	/**
	 * Prepares a freshly opened lock session connection (already in auto-commit mode) and
	 * says what the store needs to know about it.
	 * @param connection the new connection
	 * @param settings the store settings
	 * @return the session's facts
	 * @throws SQLException if the connection cannot be prepared, or is to the wrong kind
	 * of database
	 */
	abstract SessionInfo openSession(Connection connection, JdbcStoreSettings settings) throws SQLException;

	/**
	 * The statements of a claim, one round trip: take the lock of {@code key} unless an
	 * unexpired record exists, then read the unexpired record with a view taken after the
	 * lock attempt (so that a record committed just before its owner unlocked is seen).
	 * @param session the lock session
	 * @param key the storage key
	 * @return the statements
	 */
	abstract List<Sql> claim(SessionInfo session, String key);

	/**
	 * Reads what the {@link #claim} statements answered.
	 * @param results one result per statement
	 * @return what the claim found
	 * @throws SQLException if the answer is unreadable
	 */
	abstract Probe readClaim(List<Result> results) throws SQLException;

	/**
	 * The statements that store a record (upsert, {@code expires_at} computed by the
	 * server) and commit it, only if this session still holds the lock of {@code key},
	 * then unlock.
	 * @param session the lock session
	 * @param key the storage key
	 * @param record the record
	 * @param ttl how long the record lives
	 * @return the statements
	 */
	abstract List<Sql> storeAndUnlock(SessionInfo session, String key, StoredRecord record, Duration ttl);

	/**
	 * Reads what the {@link #storeAndUnlock} statements answered.
	 * @param results one result per statement
	 * @return whether the record was stored, and whether the unlock found the lock
	 */
	abstract Stored readStore(List<Result> results);

	/**
	 * The statements that undo what a failed {@link #storeAndUnlock} may have left on a
	 * live connection, such as an aborted transaction; the lock is still held afterwards.
	 * @return the statements, possibly none
	 */
	abstract List<Sql> afterFailedStore();

	/**
	 * The statement that unlocks {@code key} on this session.
	 * @param session the lock session
	 * @param key the storage key
	 * @return the statement
	 */
	abstract Sql unlock(SessionInfo session, String key);

	/**
	 * Reads what {@link #unlock} answered.
	 * @param result its result
	 * @return whether this session held the lock
	 */
	abstract boolean readUnlock(Result result);

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
	 * Whether two storage keys map to the same database lock; only possible where locks
	 * are narrower than keys.
	 * @param key a storage key
	 * @param otherKey another storage key
	 * @return whether they share a lock
	 */
	boolean sameLock(String key, String otherKey) {
		return key.equals(otherKey);
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

	static StoredRecord record(@Nullable Object[] row) throws SQLException {
		if (!(row[0] instanceof String fingerprint) || !(row[1] instanceof byte[] response)) {
			throw new SQLException("Unreadable idempotency record");
		}
		return new StoredRecord(fingerprint, response);
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
	 * What the claim statements found.
	 *
	 * @param locked whether this session took the lock
	 * @param record the unexpired record, if one exists
	 */
	record Probe(boolean locked, @Nullable StoredRecord record) {

	}

	/**
	 * What the store statements did.
	 *
	 * @param stored whether the record was written
	 * @param unlocked whether the unlock that followed found the lock
	 */
	record Stored(boolean stored, boolean unlocked) {

	}

}
