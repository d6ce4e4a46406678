package dev.idempo.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The statements of transactional mode ({@code @Idempotent(transactional = true)}), which
 * a SQL store supplies and which run on the connection of the application's own
 * transaction (the caller holds it), never on the store's own connections. The
 * transaction itself is begun and ended by the caller ({@code dev.idempo.transaction}),
 * so that neither the web layer nor idempotent methods depend on a store's SQL.
 * <p>
 * A claim takes a lock of the key that cannot outlive the transaction's connection,
 * without waiting, then reads the key's record in a statement of its own (so that it sees
 * everything committed before the lock was granted); the record is inserted in the same
 * transaction as the protected work's writes, and both commit or roll back together.
 *
 * @author idempo
 */
public interface TransactionalStore {

	/**
	 * The store's name, for metrics.
	 * @return the name
	 */
	String name();

	/**
	 * The name of the key's lock where the lock belongs to the session rather than to the
	 * transaction, so that the caller can arrange for its release before it is taken.
	 * @param connection the transaction's connection
	 * @param key the storage key
	 * @return the lock name, or {@code null} where the lock ends with the transaction and
	 * nothing is to be {@linkplain #unlock unlocked}
	 * @throws SQLException if the connection cannot tell what the name needs
	 */
	@Nullable String lockName(Connection connection, String key) throws SQLException;

	/**
	 * Takes the key's lock without waiting, then reads its unexpired record, inside the
	 * caller's transaction on its connection.
	 * @param connection the transaction's connection
	 * @param key the storage key
	 * @param lockName {@link #lockName}
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @return what the claim found
	 * @throws SQLException if a statement fails; a session lock it may have taken is
	 * given back only by {@link #unlock}
	 */
	Claim claim(Connection connection, String key, @Nullable String lockName, int timeoutSeconds) throws SQLException;

	/**
	 * Inserts the key's record in the caller's transaction (replacing an expired one).
	 * @param connection the transaction's connection, holding the key's lock
	 * @param key the storage key
	 * @param record the record
	 * @param ttl how long it is kept
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @throws SQLException if the statement fails or writes nothing
	 */
	void insert(Connection connection, String key, StoredRecord record, Duration ttl, int timeoutSeconds)
			throws SQLException;

	/**
	 * Gives back a session lock that {@link #claim} may have taken, once its transaction
	 * has ended. Safe whatever the claim did: a lock the session does not hold is left
	 * alone.
	 * @param connection the connection that may hold it
	 * @param lockName {@link #lockName}
	 * @param timeoutSeconds the statement timeout, 0 for none
	 * @throws SQLException if the statement fails
	 */
	void unlock(Connection connection, String lockName, int timeoutSeconds) throws SQLException;

	/**
	 * What a {@linkplain #claim claim} found.
	 */
	interface Claim {

		/**
		 * Whether the lock was taken (else another call holds the key).
		 * @return whether locked
		 */
		boolean locked();

		/**
		 * The key's unexpired record, if locked and there is one.
		 * @return the record, or {@code null}
		 */
		@Nullable StoredRecord record();

		/**
		 * Whether the read saw everything committed before the lock was granted; if not,
		 * the claim must be made again in a transaction whose reads do.
		 * @return whether the snapshot follows the lock
		 */
		boolean snapshotFollowsLock();

	}

}
