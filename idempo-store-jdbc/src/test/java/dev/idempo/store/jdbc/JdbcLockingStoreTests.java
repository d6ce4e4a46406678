package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransactionRollbackException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreContractTest;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
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
abstract class JdbcLockingStoreTests extends LockingStoreContractTest {

	private String table;

	private final List<JdbcLockingStore> extraStores = new ArrayList<>();

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
	final DataSource dataSource() {
		return dataSource(database());
	}

	/**
	 * Where lock sessions come from, on {@code database} (the server, or the server
	 * through a proxy).
	 * @param database the server
	 * @return the data source
	 */
	DataSource dataSource(TestDatabase database) {
		return database.dataSource();
	}

	/**
	 * Creates a store.
	 * @param settings the settings
	 * @return the store
	 */
	abstract JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings);

	/**
	 * Kills, from another session, the database session that holds the lock of
	 * {@code lease}, and waits until the server has let go of it.
	 * @param store the store that granted the lease
	 * @param lease the lease
	 */
	abstract void killSessionHolding(JdbcLockingStore store, Lease lease);

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
		((JdbcLockingStore) store).close();
		this.extraStores.forEach(JdbcLockingStore::close);
		this.extraStores.clear();
	}

	@Override
	protected void breakLease(Lease lease) {
		killSessionHolding((JdbcLockingStore) store(), lease);
	}

	JdbcLockingStore extraStore(JdbcStoreSettings settings) {
		return extraStore(dataSource(), settings);
	}

	JdbcLockingStore extraStore(DataSource dataSource, JdbcStoreSettings settings) {
		JdbcLockingStore store = newStore(dataSource, settings);
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
		JdbcLockingStore store = (JdbcLockingStore) store();
		try (Connection connection = dataSource().getConnection()) {
			long before = idleTimeoutSeconds(connection);
			store.dialect().openSession(connection, store.settings());
			if (platform().equals("postgresql") && connection.getMetaData().getDatabaseMajorVersion() < 14) {
				// idle_session_timeout came with PostgreSQL 14
				assertThat(idleTimeoutSeconds(connection)).isEqualTo(before);
				return;
			}
			assertThat(idleTimeoutSeconds(connection)).isEqualTo(60).isNotEqualTo(before);
		}
	}

	@Test
	void aClaimWhoseSessionStopsAnsweringFailsAtTheNetworkTimeoutWithoutOpeningAnother() {
		// no background pings: one of them could meet the silent session first
		JdbcStoreSettings settings = settings().withLockSessions(1)
			.withTimeout(Duration.ofSeconds(1))
			.withNetworkTimeout(Duration.ofSeconds(2))
			.withSessionCheckInterval(Duration.ofMinutes(1));
		try (TcpProxy proxy = database().proxy()) {
			JdbcLockingStore store = extraStore(dataSource(database().through(proxy)), settings);
			Lease warm = ((ClaimResult.Acquired) store.claim(newKey(), LOCK_TTL)).lease();
			assertThat(store.release(warm)).isTrue();
			int connections = proxy.connections();
			// the lock session's connection goes silent: nothing answers, nothing closes
			proxy.blackHole();
			long start = System.nanoTime();
			CompletableFuture<ClaimResult> claim = CompletableFuture.supplyAsync(() -> store.claim(newKey(), LOCK_TTL));
			// waits far longer than the bound, so that a hang fails here
			assertThatExceptionOfType(ExecutionException.class)
				.isThrownBy(() -> claim.get(settings.networkTimeout().toMillis() + 10_000, TimeUnit.MILLISECONDS))
				.withCauseInstanceOf(LockingStoreException.class);
			Duration failedAfter = Duration.ofNanos(System.nanoTime() - start);
			assertThat(failedAfter).isGreaterThanOrEqualTo(settings.networkTimeout().minusMillis(100))
				.isLessThan(settings.networkTimeout().plusSeconds(2));
			// its caller's time is up: the claim is not tried again on a new session
			assertThat(proxy.connections()).isEqualTo(connections);
			proxy.forward();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> store.claim(newKey(), LOCK_TTL) instanceof ClaimResult.Acquired acquired
						&& store.release(acquired.lease()));
		}
	}

	@Test
	void aDeadLockSessionLosesEveryClaimOnIt() {
		JdbcLockingStore store = extraStore(settings().withLockSessions(1));
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
		killSessionHolding((JdbcLockingStore) store(), lease);
		// another instance may claim at once; this one after its session check
		JdbcLockingStore other = extraStore(settings());
		Lease elsewhere = ((ClaimResult.Acquired) other.claim(key, LOCK_TTL)).lease();
		assertThat(other.release(elsewhere)).isTrue();
		await().atMost(Duration.ofSeconds(10)).until(() -> !store().renew(lease, LOCK_TTL));
		Lease again = acquire(key);
		assertThat(store().complete(lease, record("late"), TTL)).isFalse();
		assertThat(store().complete(again, record("again"), TTL)).isTrue();
	}

	@Test
	void instancesExcludeEachOtherThroughTheDatabase() {
		JdbcLockingStore other = extraStore(settings());
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
			JdbcLockingStore store = extraStore(settings().withTableName(table).withCleanup(Duration.ofHours(1), 2));
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
				SqlPipeline.Sql delete = store.dialect().deleteExpired(2);
				assertThat(SqlPipeline.run(connection, false, 5, List.of(delete)).get(0).updateCount()).isEqualTo(2);
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
			JdbcLockingStore store = extraStore(settings().withTableName(table));
			String key = newKey();
			Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
			assertThat(store.complete(lease, record("qualified"), TTL)).isTrue();
			assertThat(rows(table, key)).isOne();
		}
		finally {
			database().dropTable(table);
		}
	}

	@Test
	void aBusyLockSessionNeverLeavesItsKeyLocked() throws Exception {
		JdbcLockingStore store = extraStore(settings().withLockSessions(1).withTimeout(Duration.ofSeconds(1)));
		JdbcLockingStore other = extraStore(settings());
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		// a slow statement (a locked table, a stall) holds the only session beyond the
		// timeout while the request completes
		Occupier occupier = new Occupier(store, 0);
		try {
			assertThatExceptionOfType(LockingStoreException.class)
				.isThrownBy(() -> store.complete(lease, record("busy"), TTL));
			// what the request flow does next, quietly
			try {
				store.release(lease);
			}
			catch (LockingStoreException ex) {
				// tolerated by the flow
			}
			// nothing was unlocked yet: the key is still taken everywhere
			assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
			assertThat(store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		}
		finally {
			occupier.free();
		}
		// once the session is free, the key is unlocked without anyone asking again
		await().atMost(Duration.ofSeconds(5))
			.until(() -> other.claim(key, LOCK_TTL) instanceof ClaimResult.Acquired acquired
					&& other.release(acquired.lease()));
		Lease again = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store.complete(again, record("again"), TTL)).isTrue();
	}

	@Test
	void anUnexpectedFailureWhileStoringKeepsTheKeyLockedUntilItIsUnlocked() {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		JdbcLockingStore store = extraStore(faulty, settings().withLockSessions(1));
		JdbcLockingStore other = extraStore(settings());
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		faulty.fail(FaultInjectingDataSource::isStore, () -> new IllegalStateException("driver bug"));
		assertThatIllegalStateException().isThrownBy(() -> store.complete(lease, record("failed"), TTL));
		faulty.heal();
		// the lock is not left behind on the live session
		await().atMost(Duration.ofSeconds(5))
			.until(() -> other.claim(key, LOCK_TTL) instanceof ClaimResult.Acquired acquired
					&& other.release(acquired.lease()));
		Lease again = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store.release(again)).isTrue();
		assertThat(rows(this.table, key)).isZero();
	}

	@Test
	void anUnexpectedFailureWhileClaimingNeverLeavesTheLockHeld() {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		JdbcLockingStore store = extraStore(faulty, settings().withLockSessions(1));
		JdbcLockingStore other = extraStore(settings());
		String key = newKey();
		// fails the read that follows the lock statement (a separate statement where the
		// connection runs one at a time), as a driver bug would
		faulty.fail((sql) -> sql.contains("SELECT fingerprint, response"),
				() -> new IllegalStateException("driver bug"));
		assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> store.claim(key, LOCK_TTL));
		faulty.heal();
		await().atMost(Duration.ofSeconds(5))
			.until(() -> other.claim(key, LOCK_TTL) instanceof ClaimResult.Acquired acquired
					&& other.release(acquired.lease()));
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		assertThat(store.release(lease)).isTrue();
		assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aFailedUnlockOnALiveSessionKeepsTheOtherClaimsOnIt() {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		JdbcLockingStore store = extraStore(faulty, settings().withLockSessions(1));
		JdbcLockingStore other = extraStore(settings());
		String released = newKey();
		String kept = newKey();
		Lease releasedLease = ((ClaimResult.Acquired) store.claim(released, LOCK_TTL)).lease();
		Lease keptLease = ((ClaimResult.Acquired) store.claim(kept, LOCK_TTL)).lease();
		faulty.fail(FaultInjectingDataSource::isUnlock,
				() -> new SQLTimeoutException("injected statement timeout", "57014"));
		assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> store.release(releasedLease));
		// the session lives on with the other claim
		assertThat(store.renew(keptLease, LOCK_TTL)).isTrue();
		assertThat(other.claim(kept, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		// and the released key stays locked until its unlock has run
		assertThat(other.claim(released, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store.claim(released, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		faulty.heal();
		await().atMost(Duration.ofSeconds(5))
			.until(() -> other.claim(released, LOCK_TTL) instanceof ClaimResult.Acquired acquired
					&& other.release(acquired.lease()));
		assertThat(store.complete(keptLease, record("kept"), TTL)).isTrue();
		assertThat(((ClaimResult.Completed) other.claim(kept, LOCK_TTL)).record()).isEqualTo(record("kept"));
	}

	@Test
	void aClaimTakesWhicheverSessionIsFreeFirst() throws Exception {
		JdbcLockingStore store = extraStore(settings().withLockSessions(2).withTimeout(Duration.ofSeconds(1)));
		// session 0, which the first claim tries first, is busy beyond the timeout;
		// session 1 only briefly
		Occupier slow = new Occupier(store, 0);
		Occupier quick = new Occupier(store, 1);
		try {
			Thread freeQuick = new Thread(() -> {
				sleep(100);
				quick.free();
			});
			freeQuick.start();
			long start = System.nanoTime();
			assertThat(store.claim(newKey(), LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(900));
			freeQuick.join();
		}
		finally {
			quick.free();
			slow.free();
		}
	}

	@Test
	void closingFreesTheLocksEvenOfPooledConnections() {
		try (HikariDataSource pool = new HikariDataSource()) {
			pool.setJdbcUrl(database().url());
			pool.setUsername(database().username());
			pool.setPassword(database().password());
			pool.setMaximumPoolSize(2);
			JdbcLockingStore store = newStore(pool, settings().withLockSessions(1));
			String key = newKey();
			try {
				assertThat(store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
			}
			finally {
				store.close();
			}
			// the connection went back to the pool, but not its lock
			assertThat(pool.getHikariPoolMXBean().getIdleConnections()).isPositive();
			Lease lease = ((ClaimResult.Acquired) extraStore(settings()).claim(key, LOCK_TTL)).lease();
			JdbcLockingStore reopened = newStore(pool, settings().withLockSessions(1));
			try {
				assertThat(reopened.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
			}
			finally {
				reopened.close();
			}
			assertThat(extraStore(settings()).release(lease)).isFalse();
		}
	}

	@Test
	void theSchemaScriptWorksForTablesInAnotherSchema() {
		String schema = "idempo_schema_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
		boolean postgres = platform().equals("postgresql");
		JdbcTemplate jdbc = database().jdbc();
		jdbc.execute((postgres ? "CREATE SCHEMA " : "CREATE DATABASE ") + schema);
		try {
			for (String name : List.of(JdbcStoreSettings.DEFAULT_TABLE_NAME, "idempo_responses_v2")) {
				String table = schema + "." + name;
				// twice: the script is idempotent
				database().runScript(platform(), table);
				database().runScript(platform(), table);
				Integer indexes = jdbc.queryForObject(postgres
						? "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = ? AND tablename = ? AND indexname = ?"
						: "SELECT COUNT(DISTINCT index_name) FROM information_schema.statistics"
								+ " WHERE table_schema = ? AND table_name = ? AND index_name = ?",
						Integer.class, schema, name, name + "_expires_at_idx");
				assertThat(indexes).as("expiry index of %s", table).isOne();
				JdbcLockingStore store = extraStore(settings().withTableName(table));
				String key = newKey();
				Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
				assertThat(store.complete(lease, record("elsewhere"), TTL)).isTrue();
				assertThat(rows(table, key)).isOne();
				assertThat(store.deleteExpiredRecords()).isZero();
			}
		}
		finally {
			jdbc.execute(postgres ? "DROP SCHEMA " + schema + " CASCADE" : "DROP DATABASE " + schema);
		}
	}

	@Test
	void cleanupReadsCommittedAndRetriesADeadlockOnce() throws Exception {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		List<Integer> isolations = new CopyOnWriteArrayList<>();
		faulty.onPrepare((connection, sql) -> {
			if (sql.startsWith("DELETE")) {
				try {
					isolations.add(connection.getTransactionIsolation());
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
			}
		});
		AtomicInteger deadlocks = new AtomicInteger(1);
		faulty.fail((sql) -> sql.startsWith("DELETE") && deadlocks.getAndDecrement() > 0,
				() -> new SQLTransactionRollbackException("injected deadlock", "40001", 1213));
		String table = database().createTable(platform());
		try {
			JdbcLockingStore store = extraStore(faulty, settings().withTableName(table));
			String key = newKey();
			Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
			assertThat(store.complete(lease, record("expiring"), Duration.ofMillis(1))).isTrue();
			Thread.sleep(20);
			assertThat(store.deleteExpiredRecords()).isOne();
			assertThat(deadlocks).hasNegativeValue();
			assertThat(isolations).isNotEmpty().containsOnly(Connection.TRANSACTION_READ_COMMITTED);
			assertThat(rows(table, key)).isZero();
		}
		finally {
			database().dropTable(table);
		}
	}

	// ---- concurrency: real threads, several instances, batches

	@Test
	void duplicatesRacingAcrossInstancesRunExactlyOnce() throws Exception {
		List<JdbcLockingStore> instances = List.of(extraStore(settings().withLockSessions(2)),
				extraStore(settings().withLockSessions(2)), extraStore(settings().withLockSessions(1)));
		int threads = 24;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			for (int round = 0; round < 15; round++) {
				String key = newKey();
				StoredRecord winner = record("winner of round " + round);
				AtomicInteger acquired = new AtomicInteger();
				CountDownLatch start = new CountDownLatch(1);
				List<Future<ClaimResult>> results = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					JdbcLockingStore instance = instances.get(t % instances.size());
					results.add(executor.submit(() -> {
						start.await();
						ClaimResult claim = instance.claim(key, LOCK_TTL);
						if (claim instanceof ClaimResult.Acquired won) {
							acquired.incrementAndGet();
							assertThat(instance.complete(won.lease(), winner, TTL)).isTrue();
						}
						return claim;
					}));
				}
				start.countDown();
				for (Future<ClaimResult> result : results) {
					if (result.get(30, TimeUnit.SECONDS) instanceof ClaimResult.Completed completed) {
						assertThat(completed.record()).isEqualTo(winner);
					}
				}
				assertThat(acquired).as("claims acquired in round %d", round).hasValue(1);
				for (JdbcLockingStore instance : instances) {
					assertThat(((ClaimResult.Completed) instance.claim(key, LOCK_TTL)).record()).isEqualTo(winner);
				}
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void underMixedLoadEveryCompletedKeyReplaysItsOwnRecord() throws Exception {
		List<JdbcLockingStore> instances = List.of(extraStore(settings().withLockSessions(2)),
				extraStore(settings().withLockSessions(1)));
		int threads = 16;
		int operations = 60;
		Map<String, StoredRecord> completed = new ConcurrentHashMap<>();
		List<String> released = new CopyOnWriteArrayList<>();
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int seed = t;
				futures.add(executor.submit(() -> {
					Random random = new Random(seed);
					start.await();
					for (int i = 0; i < operations; i++) {
						JdbcLockingStore instance = instances.get(random.nextInt(instances.size()));
						String key = newKey();
						Lease lease = ((ClaimResult.Acquired) instance.claim(key, LOCK_TTL)).lease();
						if (random.nextInt(4) == 0) {
							assertThat(instance.release(lease)).isTrue();
							released.add(key);
						}
						else {
							// records of different sizes, some large enough to split
							// batches
							byte[] body = new byte[(random.nextInt(20) == 0) ? 700_000 : random.nextInt(3000)];
							random.nextBytes(body);
							StoredRecord record = new StoredRecord("fp-" + key, body);
							assertThat(instance.complete(lease, record, TTL)).isTrue();
							completed.put(key, record);
						}
						// replays of earlier keys are batched with everything else
						List<String> done = new ArrayList<>(completed.keySet());
						if (!done.isEmpty()) {
							String earlier = done.get(random.nextInt(done.size()));
							ClaimResult replay = instance.claim(earlier, LOCK_TTL);
							assertThat(((ClaimResult.Completed) replay).record()).isEqualTo(completed.get(earlier));
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(completed).hasSizeGreaterThan(threads * operations / 2);
		for (Map.Entry<String, StoredRecord> entry : completed.entrySet()) {
			ClaimResult claim = instances.get(0).claim(entry.getKey(), LOCK_TTL);
			assertThat(((ClaimResult.Completed) claim).record()).isEqualTo(entry.getValue());
		}
		for (String key : released) {
			assertThat(instances.get(1).claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		}
	}

	@Test
	void completesQueuedBehindABusySessionSucceedUnderClaimPressure() throws Exception {
		JdbcLockingStore store = extraStore(settings().withLockSessions(1).withTimeout(Duration.ofSeconds(3)));
		int completes = 40;
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < completes; i++) {
			leases.add(((ClaimResult.Acquired) store.claim(newKey(), LOCK_TTL)).lease());
		}
		ExecutorService executor = Executors.newFixedThreadPool(completes + 8);
		AtomicBoolean pressure = new AtomicBoolean(true);
		List<Throwable> claimFailures = new CopyOnWriteArrayList<>();
		AtomicInteger pressingClaims = new AtomicInteger();
		try {
			// a slow statement holds the only session while everything queues behind it
			Occupier occupier = new Occupier(store, 0);
			List<Future<?>> pressing = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				pressing.add(executor.submit(() -> {
					while (pressure.get()) {
						try {
							if (store.claim(newKey(), LOCK_TTL) instanceof ClaimResult.Acquired acquired) {
								pressingClaims.incrementAndGet();
								store.release(acquired.lease());
							}
						}
						catch (LockingStoreException ex) {
							claimFailures.add(ex);
						}
					}
				}));
			}
			List<Future<Boolean>> results = new ArrayList<>();
			for (Lease lease : leases) {
				results.add(executor.submit(() -> store.complete(lease, record(lease.key()), TTL)));
			}
			sleep(500);
			occupier.free();
			for (Future<Boolean> result : results) {
				assertThat(result.get(10, TimeUnit.SECONDS)).isTrue();
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> pressingClaims.get() > 100);
			pressure.set(false);
			for (Future<?> future : pressing) {
				future.get(10, TimeUnit.SECONDS);
			}
		}
		finally {
			pressure.set(false);
			executor.shutdownNow();
		}
		assertThat(claimFailures).isEmpty();
		for (Lease lease : leases) {
			assertThat(((ClaimResult.Completed) store.claim(lease.key(), LOCK_TTL)).record())
				.isEqualTo(record(lease.key()));
		}
	}

	@Test
	void aStoreThatFailsInABatchFailsAloneAndTheOthersAreStored() throws Exception {
		JdbcLockingStore store = extraStore(settings().withLockSessions(1));
		JdbcLockingStore other = extraStore(settings());
		List<Lease> good = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			good.add(((ClaimResult.Acquired) store.claim(newKey(), LOCK_TTL)).lease());
		}
		Lease bad = ((ClaimResult.Acquired) store.claim(newKey(), LOCK_TTL)).lease();
		// longer than the fingerprint column: the database refuses this row only
		StoredRecord unstorable = new StoredRecord("f".repeat(300), new byte[10]);
		ExecutorService executor = Executors.newFixedThreadPool(6);
		try {
			Occupier occupier = new Occupier(store, 0);
			List<Future<Boolean>> stored = new ArrayList<>();
			for (Lease lease : good) {
				stored.add(executor.submit(() -> store.complete(lease, record(lease.key()), TTL)));
			}
			Future<Boolean> failed = executor.submit(() -> store.complete(bad, unstorable, TTL));
			// all six queue behind the busy session and go in one batch
			sleep(300);
			occupier.free();
			for (Future<Boolean> result : stored) {
				assertThat(result.get(10, TimeUnit.SECONDS)).isTrue();
			}
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> failed.get(10, TimeUnit.SECONDS))
				.withCauseInstanceOf(LockingStoreException.class);
		}
		finally {
			executor.shutdownNow();
		}
		for (Lease lease : good) {
			assertThat(((ClaimResult.Completed) other.claim(lease.key(), LOCK_TTL)).record())
				.isEqualTo(record(lease.key()));
		}
		// the failed store was rolled back and its lock freed at once
		assertThat(rows(this.table, bad.key())).isZero();
		assertThat(other.claim(bad.key(), LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		// and the session lives on
		assertThat(store.claim(newKey(), LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Holds a lock session from a thread of its own, as a long statement would.
	 */
	static final class Occupier {

		private final CountDownLatch done = new CountDownLatch(1);

		private final Thread thread;

		Occupier(JdbcLockingStore store, int session) throws InterruptedException {
			CountDownLatch occupied = new CountDownLatch(1);
			this.thread = new Thread(() -> {
				Runnable free = store.occupySession(session);
				occupied.countDown();
				try {
					this.done.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				finally {
					free.run();
				}
			});
			this.thread.start();
			assertThat(occupied.await(5, TimeUnit.SECONDS)).isTrue();
		}

		void free() {
			this.done.countDown();
			try {
				this.thread.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
