package dev.idempo.store.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.StoredRecord;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Pins what a fresh key (claim, complete) and a replay (claim of a completed key) send to
 * the database, at one caller and at {@value #CALLERS} callers whose operations share one
 * batch: statements, round trips and commits, recorded through JDBC, so that a change
 * that adds a statement fails here.
 *
 * @author idempo
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class StatementCountTests {

	static final int CALLERS = 32;

	private static final Duration LOCK_TTL = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(1);

	private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);

	private String table;

	private StatementRecordingDataSource recorder;

	private JdbcLockingStore store;

	abstract TestDatabase database();

	abstract String platform();

	abstract DataSource dataSource(TestDatabase database);

	abstract JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings);

	/** What one fresh key costs at one caller. */
	abstract Cost freshKey();

	/** What one replay costs at one caller. */
	abstract Cost replay();

	/**
	 * What {@value #CALLERS} fresh keys in one claim batch and one complete batch cost.
	 */
	abstract Cost freshKeysBatched();

	/** What {@value #CALLERS} replays in one batch cost. */
	abstract Cost replaysBatched();

	@BeforeAll
	void createTable() {
		this.table = database().createTable(platform());
	}

	@AfterAll
	void dropTable() {
		this.callers.shutdownNow();
		if (this.table != null) {
			database().dropTable(this.table);
		}
	}

	@BeforeEach
	void openStore() {
		this.recorder = new StatementRecordingDataSource(dataSource(database()));
		// one session, and no session check or cleanup while a test counts
		JdbcStoreSettings settings = JdbcStoreSettings.defaults()
			.withTableName(this.table)
			.withLockSessions(1)
			.withSessionCheckInterval(Duration.ofHours(1))
			.withCleanup(Duration.ofHours(1), 100);
		this.store = newStore(this.recorder, settings);
		// opens the session
		Lease warm = ((ClaimResult.Acquired) this.store.claim(newKey(), LOCK_TTL)).lease();
		assertThat(this.store.release(warm)).isTrue();
		this.recorder.clear();
	}

	@AfterEach
	void closeStore() {
		this.store.close();
	}

	JdbcLockingStore store() {
		return this.store;
	}

	StatementRecordingDataSource recorder() {
		return this.recorder;
	}

	@Test
	void freshKeyAtOneCaller() {
		String key = newKey();
		Cost cost = measure("fresh key, 1 caller", () -> {
			Lease lease = ((ClaimResult.Acquired) this.store.claim(key, LOCK_TTL)).lease();
			assertThat(this.store.complete(lease, record(key), TTL)).isTrue();
		});
		assertThat(cost).isEqualTo(freshKey());
		assertThat(((ClaimResult.Completed) this.store.claim(key, LOCK_TTL)).record()).isEqualTo(record(key));
	}

	@Test
	void replayAtOneCaller() {
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) this.store.claim(key, LOCK_TTL)).lease();
		assertThat(this.store.complete(lease, record(key), TTL)).isTrue();
		Cost cost = measure("replay, 1 caller",
				() -> assertThat(((ClaimResult.Completed) this.store.claim(key, LOCK_TTL)).record())
					.isEqualTo(record(key)));
		assertThat(cost).isEqualTo(replay());
	}

	@Test
	void freshKeysOfManyCallersInOneBatch() throws Exception {
		List<String> keys = keys();
		Cost cost = measure("fresh keys, " + CALLERS + " callers, one batch each", () -> {
			List<Lease> leases = claimTogether(keys).stream()
				.map((result) -> ((ClaimResult.Acquired) result).lease())
				.toList();
			assertThat(completeTogether(leases)).containsOnly(true);
		});
		assertThat(cost).isEqualTo(freshKeysBatched());
		for (String key : keys) {
			assertThat(((ClaimResult.Completed) this.store.claim(key, LOCK_TTL)).record()).isEqualTo(record(key));
		}
	}

	@Test
	void replaysOfManyCallersInOneBatch() throws Exception {
		List<String> keys = keys();
		for (String key : keys) {
			Lease lease = ((ClaimResult.Acquired) this.store.claim(key, LOCK_TTL)).lease();
			assertThat(this.store.complete(lease, record(key), TTL)).isTrue();
		}
		Cost cost = measure("replays, " + CALLERS + " callers, one batch", () -> {
			List<ClaimResult> results = claimTogether(keys);
			for (int i = 0; i < keys.size(); i++) {
				assertThat(((ClaimResult.Completed) results.get(i)).record()).isEqualTo(record(keys.get(i)));
			}
		});
		assertThat(cost).isEqualTo(replaysBatched());
	}

	/**
	 * {@value #CALLERS} callers running freely on 4 sessions, as an application does:
	 * batches form by chance, so only bounds are certain, and the averages are printed.
	 */
	@Test
	void freshKeysAndReplaysOfManyCallersRunningFreely() throws Exception {
		int perCaller = 20;
		JdbcLockingStore store = newStore(this.recorder,
				JdbcStoreSettings.defaults()
					.withTableName(this.table)
					.withSessionCheckInterval(Duration.ofHours(1))
					.withCleanup(Duration.ofHours(1), 100));
		try {
			List<String> keys = new java.util.concurrent.CopyOnWriteArrayList<>();
			double fresh = perOperation("fresh keys, " + CALLERS + " callers running freely", perCaller, () -> {
				String key = newKey();
				Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
				assertThat(store.complete(lease, record(key), TTL)).isTrue();
				keys.add(key);
			});
			java.util.Iterator<String> replayed = List.copyOf(keys).iterator();
			double replay = perOperation("replays, " + CALLERS + " callers running freely", perCaller, () -> {
				String key;
				synchronized (replayed) {
					key = replayed.next();
				}
				assertThat(((ClaimResult.Completed) store.claim(key, LOCK_TTL)).record()).isEqualTo(record(key));
			});
			// no worse than alone, plus the share of a batch's transaction (2 completes)
			assertThat(fresh).isLessThanOrEqualTo(freshKey().statements() + 0.5);
			assertThat(replay).isLessThanOrEqualTo(replay().statements());
		}
		finally {
			store.close();
		}
	}

	/** Statements per operation when every caller runs {@code work} that often. */
	private double perOperation(String what, int perCaller, ThrowingRunnable work) throws Exception {
		this.recorder.clear();
		java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
		List<Future<?>> callers = new ArrayList<>();
		for (int i = 0; i < CALLERS; i++) {
			callers.add(this.callers.submit(() -> {
				start.await();
				for (int j = 0; j < perCaller; j++) {
					work.run();
				}
				return null;
			}));
		}
		start.countDown();
		all(callers);
		// the statements of opening sessions are not the operations'
		List<String> statements = this.recorder.statements()
			.stream()
			.filter((statement) -> !statement.startsWith("SET ") && !statement.startsWith("SELECT CONNECTION_ID")
					&& !statement.matches("SELECT [12]") && !statement.startsWith("SELECT pg_backend_pid"))
			.toList();
		double operations = (double) CALLERS * perCaller;
		System.out.printf("%s: %.2f statements, %.2f round trips, %.3f commits per operation%n",
				platform() + ": " + what, statements.size() / operations, this.recorder.roundTrips() / operations,
				commits(statements) / operations);
		return statements.size() / operations;
	}

	/** Claims the keys in one batch: all queue while the test holds the session. */
	private List<ClaimResult> claimTogether(List<String> keys) {
		Runnable letGo = this.store.occupySession(0);
		List<Future<ClaimResult>> claims = new ArrayList<>();
		for (String key : keys) {
			claims.add(this.callers.submit(() -> this.store.claim(key, LOCK_TTL)));
		}
		await().atMost(Duration.ofSeconds(4)).until(() -> this.store.queuedClaims() == keys.size());
		letGo.run();
		return all(claims);
	}

	/** Completes the leases in one batch, as {@link #claimTogether} claims. */
	private List<Boolean> completeTogether(List<Lease> leases) {
		Runnable letGo = this.store.occupySession(0);
		List<Future<Boolean>> completes = new ArrayList<>();
		for (Lease lease : leases) {
			completes.add(this.callers.submit(() -> this.store.complete(lease, record(lease.key()), TTL)));
		}
		await().atMost(Duration.ofSeconds(4)).until(() -> this.store.session(0).completes().size() == leases.size());
		letGo.run();
		return all(completes);
	}

	private static <T> List<T> all(List<? extends Future<? extends T>> futures) {
		List<T> results = new ArrayList<>();
		for (Future<? extends T> future : futures) {
			try {
				results.add(future.get(10, TimeUnit.SECONDS));
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}
		return results;
	}

	private Cost measure(String what, ThrowingRunnable work) {
		Map<String, Long> before = serverCounters();
		this.recorder.clear();
		try {
			work.run();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		List<String> statements = this.recorder.statements();
		Cost cost = new Cost(statements.size(), this.recorder.roundTrips(), commits(statements));
		List<String> calls = this.recorder.calls();
		Map<String, Long> after = serverCounters();
		StringBuilder report = new StringBuilder(platform() + ": " + what + ": " + cost + ", calls " + calls);
		statements.forEach((statement) -> report.append("\n  ").append(abbreviate(statement)));
		if (before != null && after != null) {
			report.append("\n  server session counters: ").append(deltas(before, after));
		}
		System.out.println(report);
		// nothing but statements reaches the server: no auto-commit switch, no ping
		assertThat(calls).isEmpty();
		return cost;
	}

	/**
	 * The lock session's own server counters, read on its connection, or {@code null}.
	 * @return the counters
	 */
	@Nullable Map<String, Long> serverCounters() {
		return null;
	}

	private static Map<String, Long> deltas(Map<String, Long> before, Map<String, Long> after) {
		Map<String, Long> deltas = new java.util.TreeMap<>();
		after.forEach((name, value) -> {
			long delta = value - before.getOrDefault(name, 0L);
			if (delta != 0) {
				deltas.put(name, delta);
			}
		});
		return deltas;
	}

	/** Explicit commits, and writes that commit on their own (auto-commit). */
	private static int commits(List<String> statements) {
		int commits = 0;
		boolean inTransaction = false;
		for (String statement : statements) {
			String verb = statement.strip().split("\\s+")[0].toUpperCase(Locale.ROOT);
			switch (verb) {
				case "BEGIN", "START" -> inTransaction = true;
				case "COMMIT" -> {
					inTransaction = false;
					commits++;
				}
				case "ROLLBACK" -> inTransaction = false;
				case "INSERT", "REPLACE", "UPDATE", "DELETE" -> commits += inTransaction ? 0 : 1;
				default -> {
				}
			}
		}
		return commits;
	}

	private static String abbreviate(String statement) {
		String flat = statement.replaceAll("\\s+", " ");
		return (flat.length() > 140) ? flat.substring(0, 140) + "..." : flat;
	}

	private static List<String> keys() {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < CALLERS; i++) {
			keys.add(newKey());
		}
		return keys;
	}

	private static String newKey() {
		return "count-" + java.util.UUID.randomUUID();
	}

	private static StoredRecord record(String key) {
		return new StoredRecord("fingerprint-" + key.hashCode(), ("response " + key).getBytes());
	}

	/** Statements and round trips sent, and commits, of one measured piece of work. */
	record Cost(int statements, long roundTrips, int commits) {

	}

	@FunctionalInterface
	interface ThrowingRunnable {

		void run() throws Exception;

	}

}
