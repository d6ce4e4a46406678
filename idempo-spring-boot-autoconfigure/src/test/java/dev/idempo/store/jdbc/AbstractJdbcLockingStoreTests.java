package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreContractTest;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The contract on a real SQL server, plus what only the SQL stores promise: dead lock
 * sessions lose their claims, instances exclude each other through the database, expired
 * rows are deleted in bounded batches. Each test class works in a table of its own with a
 * random name, created from the shipped script and dropped afterwards.
 *
 * @author idempo
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractJdbcLockingStoreTests extends LockingStoreContractTest {

	private String table;

	private final List<AbstractJdbcLockingStore<?>> extraStores = new ArrayList<>();

	/**
	 * The server under test.
	 * @return the server
	 */
	abstract TestDatabase database();

	/**
	 * The schema script platform: {@code postgresql} or {@code mysql}.
	 * @return the platform
	 */
	abstract String platform();

	/**
	 * Where lock sessions come from.
	 * @return the data source
	 */
	DataSource dataSource() {
		return database().dataSource();
	}

	/**
	 * Creates a store.
	 * @param settings the settings
	 * @return the store
	 */
	abstract AbstractJdbcLockingStore<?> newStore(DataSource dataSource, JdbcStoreSettings settings);

	/**
	 * Kills, from another session, the database session that holds the lock of
	 * {@code lease}, and waits until the server has let go of it.
	 * @param store the store that granted the lease
	 * @param lease the lease
	 */
	abstract void killSessionHolding(AbstractJdbcLockingStore<?> store, Lease lease);

	/**
	 * The idle timeout the server applies to {@code connection}'s session.
	 * @param connection the connection
	 * @return the timeout in seconds
	 */
	abstract long idleTimeoutSeconds(Connection connection) throws Exception;

	@BeforeAll
	void createTable() {
		this.table = database().createTable(platform());
	}

	@AfterAll
	void dropTable() {
		if (this.table != null) {
			database().dropTable(this.table);
		}
	}

	JdbcStoreSettings settings() {
		// a short check interval lets a killed session be noticed quickly
		return JdbcStoreSettings.defaults().withTableName(this.table).withSessionCheckInterval(Duration.ofMillis(200));
	}

	String table() {
		return this.table;
	}

	@Override
	protected LockingStore createStore() {
		return newStore(dataSource(), settings());
	}

	@Override
	protected void destroyStore(LockingStore store) {
		((AbstractJdbcLockingStore<?>) store).close();
		this.extraStores.forEach(AbstractJdbcLockingStore::close);
		this.extraStores.clear();
	}

	@Override
	protected void breakLease(Lease lease) {
		killSessionHolding((AbstractJdbcLockingStore<?>) store(), lease);
	}

	AbstractJdbcLockingStore<?> extraStore(JdbcStoreSettings settings) {
		AbstractJdbcLockingStore<?> store = newStore(dataSource(), settings);
		this.extraStores.add(store);
		return store;
	}

	int rows(String table, String key) {
		Integer count = database().jdbc()
			.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE storage_key = ?", Integer.class, key);
		return (count != null) ? count : -1;
	}

	@Test
	void storeNameIsStable() {
		assertThat(store().name()).isEqualTo(platform().equals("postgresql") ? "postgres" : "mysql");
		assertThat(store().leaseExpires()).isFalse();
	}

	@Test
	void lockSessionsAskTheServerToEndThemIfThisInstanceVanishes() throws Exception {
		AbstractJdbcLockingStore<?> store = (AbstractJdbcLockingStore<?>) store();
		try (Connection connection = dataSource().getConnection()) {
			long before = idleTimeoutSeconds(connection);
			store.openSession(connection);
			if (platform().equals("postgresql") && connection.getMetaData().getDatabaseMajorVersion() < 14) {
				// idle_session_timeout came with PostgreSQL 14
				assertThat(idleTimeoutSeconds(connection)).isEqualTo(before);
				return;
			}
			assertThat(idleTimeoutSeconds(connection)).isEqualTo(60).isNotEqualTo(before);
		}
	}

	@Test
	void aDeadLockSessionLosesEveryClaimOnIt() {
		AbstractJdbcLockingStore<?> store = extraStore(settings().withLockSessions(1));
		String first = newKey();
		String second = newKey();
		Lease firstLease = ((ClaimResult.Acquired) store.claim(first, LOCK_TTL)).lease();
		Lease secondLease = ((ClaimResult.Acquired) store.claim(second, LOCK_TTL)).lease();
		killSessionHolding(store, firstLease);
		assertThat(store.complete(firstLease, record("lost"), TTL)).isFalse();
		assertThat(store.release(secondLease)).isFalse();
		assertThat(store.renew(secondLease, LOCK_TTL)).isFalse();
		assertThat(rows(this.table, first)).isZero();
		// free again, in this instance and in another one
		assertThat(store.claim(first, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store().claim(second, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aSessionKilledWhileIdleIsNoticedAndItsKeysFreedInThisInstance() {
		String key = newKey();
		Lease lease = acquire(key);
		killSessionHolding((AbstractJdbcLockingStore<?>) store(), lease);
		// another instance may claim at once; this one after its session check
		AbstractJdbcLockingStore<?> other = extraStore(settings());
		Lease elsewhere = ((ClaimResult.Acquired) other.claim(key, LOCK_TTL)).lease();
		assertThat(other.release(elsewhere)).isTrue();
		await().atMost(Duration.ofSeconds(10)).until(() -> !store().renew(lease, LOCK_TTL));
		Lease again = acquire(key);
		assertThat(store().complete(lease, record("late"), TTL)).isFalse();
		assertThat(store().complete(again, record("again"), TTL)).isTrue();
	}

	@Test
	void instancesExcludeEachOtherThroughTheDatabase() {
		AbstractJdbcLockingStore<?> other = extraStore(settings());
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store().complete(lease, record("mine"), TTL)).isTrue();
		ClaimResult seen = other.claim(key, LOCK_TTL);
		assertThat(((ClaimResult.Completed) seen).record()).isEqualTo(record("mine"));
		String second = newKey();
		Lease theirs = ((ClaimResult.Acquired) other.claim(second, LOCK_TTL)).lease();
		assertThat(store().claim(second, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(other.release(theirs)).isTrue();
		acquire(second);
	}

	@Test
	void expiredRowsAreDeletedInBoundedBatches() throws Exception {
		String table = database().createTable(platform());
		try {
			AbstractJdbcLockingStore<?> store = extraStore(
					settings().withTableName(table).withCleanup(Duration.ofHours(1), 2));
			List<String> expiring = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				String key = newKey();
				Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
				assertThat(store.complete(lease, record("expiring"), Duration.ofMillis(1))).isTrue();
				expiring.add(key);
			}
			String kept = newKey();
			Lease lease = ((ClaimResult.Acquired) store.claim(kept, LOCK_TTL)).lease();
			assertThat(store.complete(lease, record("kept"), TTL)).isTrue();
			// expired rows are absent for claims before any cleanup
			await().atMost(Duration.ofSeconds(10))
				.until(() -> store.claim(expiring.get(0), LOCK_TTL) instanceof ClaimResult.Acquired acquired
						&& store.release(acquired.lease()));
			assertThat(rows(table, expiring.get(0))).isOne();
			try (Connection connection = dataSource().getConnection()) {
				assertThat(store.deleteExpired(connection, 2)).isEqualTo(2);
			}
			assertThat(store.deleteExpiredRecords()).isEqualTo(3);
			assertThat(store.deleteExpiredRecords()).isZero();
			for (String key : expiring) {
				assertThat(rows(table, key)).isZero();
			}
			assertThat(rows(table, kept)).isOne();
			assertThat(store.claim(kept, LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
		}
		finally {
			database().dropTable(table);
		}
	}

	@Test
	void tableCanBeQualifiedByItsSchema() {
		String schema = database().jdbc()
			.queryForObject(platform().equals("postgresql") ? "SELECT current_schema()" : "SELECT DATABASE()",
					String.class);
		String table = schema + "." + database().createTable(platform());
		try {
			AbstractJdbcLockingStore<?> store = extraStore(settings().withTableName(table));
			String key = newKey();
			Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
			assertThat(store.complete(lease, record("qualified"), TTL)).isTrue();
			assertThat(rows(table, key)).isOne();
		}
		finally {
			database().dropTable(table);
		}
	}

}
