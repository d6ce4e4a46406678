package dev.idempo.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.store.Lease;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.KeyGuard.Holder;
import dev.idempo.store.jdbc.KeyGuard.State;
import dev.idempo.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link BatchRunner} on a real PostgreSQL server, with one lock session held
 * by the test thread: a batch of two completes and a release whose store statement fails
 * settles every operation, from what the database holds, also when the session dies while
 * the batch is settled.
 *
 * @author idempo
 */
class BatchRunnerTests {

	private static final long TTL_MICROS = 3_600_000_000L;

	private static String table;

	private final ExecutorService maintenance = Executors.newSingleThreadExecutor();

	private final KeyGuard guard = new KeyGuard();

	private final FaultInjectingDataSource dataSource = new FaultInjectingDataSource(
			TestDatabases.postgres().dataSource());

	private LockSessionPool pool;

	private BatchRunner runner;

	private LockSession session;

	@BeforeAll
	static void createTable() {
		table = TestDatabases.postgres().createTable("postgresql");
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.postgres().dropTable(table);
	}

	@BeforeEach
	void createRunner() {
		JdbcStoreSettings settings = JdbcStoreSettings.defaults().withTableName(table).withLockSessions(1);
		PostgresDialect dialect = new PostgresDialect(table, JdbcLockingStore.DEFAULT_LOCK_NAMESPACE);
		this.pool = new LockSessionPool(this.dataSource, dialect, settings, this.maintenance);
		this.runner = new BatchRunner(dialect, this.guard, this.pool, settings, true);
		this.session = this.pool.get(0);
	}

	@AfterEach
	void close() {
		this.dataSource.heal();
		this.runner.close();
		this.maintenance.shutdownNow();
	}

	@Test
	void aBatchWhoseStoreFailsOnceIsSettledAndRunAgainOperationByOperation() {
		List<Holder> holders = claim(3);
		AtomicInteger faults = new AtomicInteger();
		this.dataSource.fail((sql) -> FaultInjectingDataSource.isStore(sql) && faults.incrementAndGet() == 1,
				() -> new SQLException("injected"));
		List<Operation> finishing = finish(holders);
		runBatch();
		assertThat(faults).as("the batch's store failed, then the completes' own").hasValue(3);
		for (Operation operation : finishing) {
			assertThat(operation.isDone()).as(operation.toString()).isTrue();
			assertThat(operation.failure()).as(operation.toString()).isNull();
			assertThat(operation.succeeded()).as(operation.toString()).isTrue();
		}
		assertThat(fingerprintOf(holders.get(0).key)).isEqualTo("fp-0");
		assertThat(fingerprintOf(holders.get(1).key)).isEqualTo("fp-1");
		assertThat(fingerprintOf(holders.get(2).key)).isNull();
		assertAllFreed(holders);
	}

	@Test
	void aStoreThatKeepsFailingFailsOnlyTheCompletesAndFreesEveryLock() {
		List<Holder> holders = claim(3);
		this.dataSource.fail(FaultInjectingDataSource::isStore, () -> new SQLException("injected"));
		List<Operation> finishing = finish(holders);
		runBatch();
		for (Operation complete : finishing.subList(0, 2)) {
			assertThat(complete.isDone()).isTrue();
			assertThat(complete.failure()).isInstanceOf(LockingStoreException.class).hasRootCauseMessage("injected");
		}
		Operation release = finishing.get(2);
		assertThat(release.isDone()).isTrue();
		assertThat(release.failure()).isNull();
		assertThat(release.succeeded()).isTrue();
		for (Holder holder : holders) {
			assertThat(fingerprintOf(holder.key)).isNull();
		}
		assertAllFreed(holders);
	}

	@Test
	void aSessionThatDiesWhileSettlingAFailedBatchEndsEveryOperationAndLosesItsLocks() {
		List<Holder> holders = claim(3);
		long generation = this.session.generation();
		// the server refuses the second store after its condition was spent: recovery
		// must give the conditions back before the completes run again one by one
		AtomicInteger kills = new AtomicInteger();
		this.dataSource.onPrepare((connection, sql) -> {
			if (sql.startsWith("SELECT pg_try_advisory_lock_shared(") && kills.incrementAndGet() == 1) {
				terminate(this.session.info().connectionId());
			}
		});
		List<Operation> finishing = finish(holders, Long.MAX_VALUE);
		runBatch();
		assertThat(kills).as("the recovery's restore ran, once").hasValue(1);
		for (Operation complete : finishing.subList(0, 2)) {
			assertThat(complete.isDone()).as(complete.toString()).isTrue();
			assertThat(complete.failure()).as(complete.toString()).isNull();
			assertThat(complete.succeeded()).as(complete + " stored").isFalse();
		}
		Operation release = finishing.get(2);
		assertThat(release.isDone()).isTrue();
		assertThat(release.failure()).isNull();
		assertThat(release.succeeded()).as("unlocked before the store failed").isTrue();
		assertThat(this.session.isOpen()).as("the dead session is discarded").isFalse();
		for (Holder holder : holders) {
			assertThat(fingerprintOf(holder.key)).isNull();
		}
		assertAllFreed(holders);
		List<Holder> again = claim(holders.stream().map((holder) -> holder.key).toList());
		assertThat(this.session.generation()).as("a new connection").isNotIn(0L, generation);
		assertThat(again).extracting(Holder::generation).containsOnly(this.session.generation());
	}

	/** Claims {@code count} new keys in one batch. */
	private List<Holder> claim(int count) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			keys.add("batch-runner-" + System.nanoTime() + "-" + i);
		}
		return claim(keys);
	}

	/** Claims the keys in one batch, waiting at most a second for a key's last holder. */
	private List<Holder> claim(List<String> keys) {
		List<Holder> holders = new ArrayList<>();
		List<Operation> claims = new ArrayList<>();
		for (int i = 0; i < keys.size(); i++) {
			Holder holder = this.guard.enter(keys.get(i), "token-" + i, System.nanoTime() + 1_000_000_000L,
					(h) -> true);
			assertThat(holder).isNotNull();
			Operation claim = Operation.claim(holder, System.nanoTime() + 10_000_000_000L);
			this.pool.claims().add(claim);
			holders.add(holder);
			claims.add(claim);
		}
		runBatch();
		for (Operation claim : claims) {
			assertThat(claim.failure()).isNull();
			assertThat(claim.succeeded()).isTrue();
		}
		assertThat(holders).extracting(Holder::state).containsOnly(State.HELD);
		return holders;
	}

	/** Completes all but the last holder, whose claim is released, in one batch. */
	private List<Operation> finish(List<Holder> holders) {
		return finish(holders, TTL_MICROS);
	}

	/** As {@link #finish(List)}, the last complete with its own time to live. */
	private List<Operation> finish(List<Holder> holders, long lastTtlMicros) {
		List<Operation> finishing = new ArrayList<>();
		for (int i = 0; i < holders.size(); i++) {
			Holder holder = holders.get(i);
			assertThat(this.guard.finishing(new Lease(holder.key, holder.token))).isSameAs(holder);
			if (i < holders.size() - 1) {
				Operation complete = Operation.complete(holder,
						new StoredRecord("fp-" + i, ("response-" + i).getBytes(StandardCharsets.UTF_8)),
						(i < holders.size() - 2) ? TTL_MICROS : lastTtlMicros);
				this.session.completes().add(complete);
				finishing.add(complete);
			}
			else {
				Operation release = Operation.release(holder);
				this.session.releases().add(release);
				finishing.add(release);
			}
		}
		return finishing;
	}

	private void runBatch() {
		assertThat(this.session.tryRun()).isTrue();
		try {
			this.runner.runBatch(this.session);
		}
		finally {
			this.session.endRun();
		}
	}

	private void assertAllFreed(List<Holder> holders) {
		for (Holder holder : holders) {
			assertThat(holder.state()).as(holder.key).isEqualTo(State.GONE);
			assertThat(this.guard.get(holder.key)).isNull();
			Boolean free = TestDatabases.postgres()
				.jdbc()
				.queryForObject("SELECT pg_try_advisory_lock(?, ?) AND pg_advisory_unlock(?, ?)", Boolean.class,
						JdbcLockingStore.DEFAULT_LOCK_NAMESPACE, PostgresDialect.lockId(holder.key),
						JdbcLockingStore.DEFAULT_LOCK_NAMESPACE, PostgresDialect.lockId(holder.key));
			assertThat(free).as("the lock of " + holder.key + " is free").isTrue();
		}
	}

	/** Ends a server session and waits until it is gone. */
	private static void terminate(long pid) {
		Boolean ended = TestDatabases.postgres()
			.jdbc()
			.queryForObject("SELECT pg_terminate_backend(?, 10000)", Boolean.class, (int) pid);
		assertThat(ended).as("session " + pid + " ended").isTrue();
	}

	private String fingerprintOf(String key) {
		List<String> found = TestDatabases.postgres()
			.jdbc()
			.queryForList("SELECT fingerprint FROM " + table + " WHERE storage_key = ?", String.class, key);
		return found.isEmpty() ? null : found.get(0);
	}

}
