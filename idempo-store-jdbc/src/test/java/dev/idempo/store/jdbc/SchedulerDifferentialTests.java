package dev.idempo.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.StoredRecord;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Differential fuzz test of the two ways a {@link JdbcLockingStore} runs its operations:
 * the same random sequence of rounds, each a burst of concurrent claims, completes,
 * releases and renews on random keys, runs once on a batching store and once on a plain
 * one (every operation alone, one statement per round trip) against the same database,
 * and both must give the same outcomes. Operations of one round that touch one key are
 * concurrent duplicate claims, whose outcomes are compared as a multiset (which thread
 * wins is up to the scheduler, how many win is not).
 *
 * @author idempo
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SchedulerDifferentialTests {

	private static final int KEYS = 10;

	private static final int ROUNDS = 40;

	private static final int THREADS = 12;

	private String table;

	private ExecutorService threads;

	abstract TestDatabase database();

	abstract String platform();

	abstract DataSource dataSource();

	abstract JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings);

	@BeforeAll
	void setUp() {
		this.table = database().createTable(platform());
		this.threads = Executors.newFixedThreadPool(THREADS);
	}

	@AfterAll
	void tearDown() {
		this.threads.shutdownNow();
		if (this.table != null) {
			database().dropTable(this.table);
		}
	}

	@Test
	void batchingAndPlainStoresGiveTheSameOutcomesForTheSameRandomOperations() throws Exception {
		StringBuilder all = new StringBuilder();
		for (int run = 0; run < 3; run++) {
			long seed = System.nanoTime();
			List<List<String>> batched = run(seed, true);
			List<List<String>> plain = run(seed, false);
			assertThat(plain).as("outcomes of seed %d, plain against batching", seed).isEqualTo(batched);
			all.append(batched);
		}
		// the sequences did exercise every kind of outcome
		assertThat(all.toString()).contains("claim=acquired", "claim=in-progress", "claim=completed:", "complete=true",
				"complete=false", "release=true", "renew=true", "renew=false");
	}

	/**
	 * Runs the rounds of {@code seed} on a new store; its keys are its own.
	 * @return per round, the outcomes in the order of the round's keys
	 */
	private List<List<String>> run(long seed, boolean batching) throws Exception {
		Random random = new Random(seed);
		String prefix = UUID.randomUUID() + ":";
		JdbcStoreSettings settings = JdbcStoreSettings.defaults()
			.withTableName(this.table)
			.withLockSessions(2)
			// a shared machine must not turn a slow round trip into a different outcome
			.withTimeout(Duration.ofSeconds(20))
			.withBatching(batching);
		List<List<String>> outcomes = new ArrayList<>();
		try (JdbcLockingStore store = newStore(dataSource(), settings)) {
			// the newest lease of each key, live or not, and the one before it
			Map<Integer, Lease> leases = new HashMap<>();
			Map<Integer, Lease> stale = new HashMap<>();
			for (int round = 0; round < ROUNDS; round++) {
				List<Callable<String>> tasks = new ArrayList<>();
				List<Integer> keyOf = new ArrayList<>();
				List<Integer> keys = new ArrayList<>();
				for (int k = 0; k < KEYS; k++) {
					keys.add(k);
				}
				Collections.shuffle(keys, random);
				int touched = 1 + random.nextInt(5);
				for (int i = 0; i < touched; i++) {
					int key = keys.get(i);
					String storageKey = prefix + key;
					Lease lease = leases.get(key);
					int kind = random.nextInt(10);
					if (lease == null || kind < 3) {
						// concurrent duplicate claims
						int duplicates = 1 + random.nextInt(3);
						for (int d = 0; d < duplicates; d++) {
							tasks.add(() -> claim(store, storageKey));
							keyOf.add(key);
						}
					}
					else {
						Lease target = (kind == 9 && stale.containsKey(key)) ? stale.get(key) : lease;
						String body = "r" + round + "k" + key;
						tasks.add(switch (kind % 3) {
							case 0 -> () -> "complete=" + store.complete(target, record(body), Duration.ofHours(1));
							case 1 -> () -> "release=" + store.release(target);
							default -> () -> "renew=" + store.renew(target, Duration.ofSeconds(30));
						});
						keyOf.add(key);
					}
				}
				List<String> results = runTogether(tasks);
				Map<Integer, List<String>> byKey = new TreeMap<>();
				for (int i = 0; i < results.size(); i++) {
					String result = results.get(i);
					int key = keyOf.get(i);
					if (result.startsWith("claim=acquired@")) {
						Lease won = new Lease(prefix + key, result.substring("claim=acquired@".length()));
						Lease before = leases.put(key, won);
						if (before != null) {
							stale.put(key, before);
						}
						result = "claim=acquired";
					}
					byKey.computeIfAbsent(key, (k) -> new ArrayList<>()).add(result);
				}
				List<String> line = new ArrayList<>();
				byKey.forEach((key, list) -> {
					list.sort(null);
					line.add(key + ":" + list);
				});
				outcomes.add(line);
			}
			// leave no lock behind
			for (Lease lease : leases.values()) {
				store.release(lease);
			}
		}
		return outcomes;
	}

	private static String claim(JdbcLockingStore store, String key) {
		ClaimResult result = store.claim(key, Duration.ofSeconds(30));
		if (result instanceof ClaimResult.Acquired acquired) {
			return "claim=acquired@" + acquired.lease().token();
		}
		if (result instanceof ClaimResult.Completed completed) {
			return "claim=completed:" + completed.record().fingerprint() + ":"
					+ new String(completed.record().response(), StandardCharsets.UTF_8);
		}
		return "claim=in-progress";
	}

	private List<String> runTogether(List<Callable<String>> tasks) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<String>> futures = new ArrayList<>();
		for (Callable<String> task : tasks) {
			futures.add(this.threads.submit(() -> {
				start.await();
				return task.call();
			}));
		}
		start.countDown();
		List<String> results = new ArrayList<>();
		for (Future<String> future : futures) {
			results.add(future.get(90, TimeUnit.SECONDS));
		}
		return results;
	}

	private static StoredRecord record(String body) {
		return new StoredRecord("fp-" + body, body.getBytes(StandardCharsets.UTF_8));
	}

}
