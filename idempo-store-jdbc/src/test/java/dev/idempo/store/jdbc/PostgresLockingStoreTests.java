package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The contract and the SQL store tests on a real PostgreSQL server.
 *
 * @author idempo
 */
class PostgresLockingStoreTests extends JdbcLockingStoreTests {

	private static final String HOLDER_SQL = "SELECT pid FROM pg_locks WHERE locktype = 'advisory'"
			+ " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
			+ " AND classid = CAST(CAST(? AS integer) AS oid) AND objid = CAST(CAST(? AS integer) AS oid)"
			+ " AND objsubid = 2 AND mode = 'ExclusiveLock' AND granted";

	@Override
	TestDatabase database() {
		return TestDatabases.postgres();
	}

	@Override
	String platform() {
		return "postgresql";
	}

	@Override
	JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings) {
		return JdbcLockingStore.postgres(dataSource, settings, JdbcLockingStore.DEFAULT_LOCK_NAMESPACE);
	}

	@Override
	void killSessionHolding(JdbcLockingStore holder, Lease lease) {
		PostgresDialect store = dialect(holder);
		JdbcTemplate jdbc = database().jdbc();
		Integer pid = jdbc.queryForObject(HOLDER_SQL, Integer.class, store.lockNamespace(), store.lockId(lease.key()));
		assertThat(jdbc.queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, pid)).isTrue();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> jdbc.queryForObject("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ?", Integer.class,
					pid) == 0);
	}

	@Override
	long idleTimeoutSeconds(Connection connection) throws Exception {
		try (PreparedStatement statement = connection
			.prepareStatement("SELECT setting FROM pg_settings WHERE name = 'idle_session_timeout'");
				ResultSet result = statement.executeQuery()) {
			assertThat(result.next()).isTrue();
			return Long.parseLong(result.getString(1)) / 1000;
		}
	}

	@Test
	void locksAreTwoKeyAdvisoryLocksInTheStoresNamespace() throws Exception {
		JdbcLockingStore store = (JdbcLockingStore) store();
		String key = newKey();
		int namespace = dialect(store).lockNamespace();
		int id = dialect(store).lockId(key);
		try (Connection application = database().connect()) {
			// the application's own locks: a bigint lock with the same 64 bits, and a
			// two-key lock in another namespace
			long sameBits = ((long) namespace << 32) | (id & 0xFFFFFFFFL);
			lock(application, "SELECT pg_advisory_lock(?)", sameBits);
			lock(application, "SELECT pg_advisory_lock(?, ?)", namespace + 1, id);
			Lease lease = acquire(key);
			assertThat(database().jdbc().queryForObject(HOLDER_SQL, Integer.class, namespace, id)).isNotNull();
			assertThat(store.release(lease)).isTrue();
			// the same two keys are the store's lock
			lock(application, "SELECT pg_advisory_lock(?, ?)", namespace, id);
			assertThat(store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		}
		awaitAcquired(key);
	}

	@Test
	void anotherNamespaceIsAnotherLock() {
		String key = newKey();
		acquire(key);
		JdbcLockingStore other = JdbcLockingStore.postgres(dataSource(), settings(), 42);
		try {
			assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		}
		finally {
			other.close();
		}
	}

	@Test
	void keysWhoseLockIdsCollideShareALockButNeverRunTwice() {
		JdbcLockingStore store = extraStore(settings().withLockSessions(1));
		JdbcLockingStore elsewhere = extraStore(settings());
		String[] keys = collidingKeys(store);
		Lease first = ((ClaimResult.Acquired) store.claim(keys[0], LOCK_TTL)).lease();
		// same session: the lock is re-entrant and the guard tells the keys apart
		Lease second = ((ClaimResult.Acquired) store.claim(keys[1], LOCK_TTL)).lease();
		assertThat(store.claim(keys[0], LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(elsewhere.claim(keys[0], LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store.complete(first, record("first"), TTL)).isTrue();
		assertThat(((ClaimResult.Completed) elsewhere.claim(keys[0], LOCK_TTL)).record()).isEqualTo(record("first"));
		// the shared lock is still held for the second key
		assertThat(elsewhere.claim(keys[1], LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store.release(second)).isTrue();
		assertThat(elsewhere.claim(keys[1], LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void queuedUnlockOfACollidingLockEndsTheSessionInsteadOfRunning() throws Exception {
		JdbcLockingStore store = extraStore(settings().withLockSessions(1)
			.withTimeout(Duration.ofSeconds(1))
			.withSessionCheckInterval(Duration.ofSeconds(30)));
		JdbcLockingStore elsewhere = extraStore(settings());
		String[] keys = collidingKeys(store);
		Lease first = ((ClaimResult.Acquired) store.claim(keys[0], LOCK_TTL)).lease();
		Lease second = ((ClaimResult.Acquired) store.claim(keys[1], LOCK_TTL)).lease();
		// the session stays busy: the release queues its unlock
		Occupier occupier = new Occupier(store, 0);
		try {
			assertThat(store.release(first)).isTrue();
		}
		finally {
			occupier.free();
		}
		// the shared lock's counts cannot be told apart: the session is ended, which
		// frees both keys, and the second claim is lost rather than kept on a guess
		await().atMost(Duration.ofSeconds(10)).until(() -> !store.renew(second, LOCK_TTL));
		Lease theirs = ((ClaimResult.Acquired) elsewhere.claim(keys[1], LOCK_TTL)).lease();
		assertThat(store.complete(second, record("lost"), TTL)).isFalse();
		assertThat(elsewhere.complete(theirs, record("theirs"), TTL)).isTrue();
		assertThat(((ClaimResult.Completed) store.claim(keys[1], LOCK_TTL)).record()).isEqualTo(record("theirs"));
		assertThat(store.claim(keys[0], LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void completeStoresNothingOnceItsSessionNoLongerHoldsTheLock() throws Exception {
		JdbcLockingStore store = extraStore(settings().withLockSessions(1));
		JdbcLockingStore elsewhere = extraStore(settings());
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		// the lock is freed behind the store's back while the backend lives on
		Runnable free = store.occupySession(0);
		try (PreparedStatement statement = store.session(0)
			.connection()
			.prepareStatement("SELECT pg_advisory_unlock_all()")) {
			statement.execute();
		}
		finally {
			free.run();
		}
		Lease theirs = ((ClaimResult.Acquired) elsewhere.claim(key, LOCK_TTL)).lease();
		assertThat(store.complete(lease, record("late"), TTL)).isFalse();
		assertThat(rows(table(), key)).isZero();
		assertThat(elsewhere.complete(theirs, record("theirs"), TTL)).isTrue();
		assertThat(((ClaimResult.Completed) store.claim(key, LOCK_TTL)).record()).isEqualTo(record("theirs"));
	}

	private static String[] collidingKeys(JdbcLockingStore store) {
		Map<Integer, String> seen = new HashMap<>();
		String prefix = newKey().substring(0, 16);
		for (int i = 0;; i++) {
			String key = prefix + Integer.toHexString(i);
			String other = seen.putIfAbsent(dialect(store).lockId(key), key);
			if (other != null) {
				return new String[] { other, key };
			}
		}
	}

	private static PostgresDialect dialect(JdbcLockingStore store) {
		return (PostgresDialect) store.dialect();
	}

	private static void lock(Connection connection, String sql, Object... parameters) throws Exception {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			for (int i = 0; i < parameters.length; i++) {
				statement.setObject(i + 1, parameters[i]);
			}
			statement.execute();
		}
	}

}
