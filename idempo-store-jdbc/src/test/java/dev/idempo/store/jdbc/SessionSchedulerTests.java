package dev.idempo.store.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.idempo.store.Lease;
import dev.idempo.store.jdbc.KeyGuard.Holder;
import dev.idempo.store.jdbc.KeyGuard.State;
import dev.idempo.store.jdbc.SqlPipeline.Sql;
import dev.idempo.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LockSessionPool}, {@link BatchRunner} and both
 * {@link SessionScheduler}s on a real PostgreSQL server, with one lock session: a claim
 * waits while the session is taken, runs once it is handed on, and is cancelled unstarted
 * at its deadline.
 *
 * @author idempo
 */
class SessionSchedulerTests {

	private static String table;

	private final ExecutorService maintenance = Executors.newSingleThreadExecutor();

	private final KeyGuard guard = new KeyGuard();

	private LockSessionPool pool;

	private BatchRunner runner;

	@BeforeAll
	static void createTable() {
		table = TestDatabases.postgres().createTable("postgresql");
	}

	@AfterAll
	static void dropTable() {
		TestDatabases.postgres().dropTable(table);
	}

	@AfterEach
	void close() {
		if (this.runner != null) {
			this.runner.close();
		}
		this.maintenance.shutdownNow();
	}

	private SessionScheduler scheduler(boolean batching) {
		JdbcStoreSettings settings = JdbcStoreSettings.defaults()
			.withTableName(table)
			.withLockSessions(1)
			.withTimeout(Duration.ofSeconds(2));
		this.pool = new LockSessionPool(TestDatabases.postgres().dataSource(),
				new PostgresDialect(settings.tableName(), JdbcLockingStore.DEFAULT_LOCK_NAMESPACE), settings,
				this.maintenance);
		this.runner = new BatchRunner(
				new PostgresDialect(settings.tableName(), JdbcLockingStore.DEFAULT_LOCK_NAMESPACE), this.guard,
				this.pool, settings, batching);
		return batching ? new BatchScheduler(this.pool, this.runner, this.maintenance, settings)
				: new PlainScheduler(this.pool, this.runner, this.maintenance, settings);
	}

	private Holder enter(String key) {
		Holder holder = this.guard.enter(key, "token", System.nanoTime(), (h) -> true);
		assertThat(holder).isNotNull();
		return holder;
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aClaimWaitsForTheTakenSessionAndRunsOnceItIsHandedOn(boolean batching) throws Exception {
		SessionScheduler scheduler = scheduler(batching);
		LockSession session = this.pool.get(0);
		assertThat(session.tryRun()).isTrue();
		Holder holder = enter("scheduler-" + System.nanoTime());
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		Operation claim = Operation.claim(holder, deadline);
		CompletableFuture<Boolean> ran = CompletableFuture.supplyAsync(() -> scheduler.runClaim(claim, deadline));
		await().during(200, TimeUnit.MILLISECONDS).atMost(1, TimeUnit.SECONDS).until(() -> !ran.isDone());
		assertThat(claim.isQueued()).isTrue();
		session.endRun();
		scheduler.handOff(session);
		assertThat(ran.get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(claim.failure()).isNull();
		assertThat(claim.succeeded()).isTrue();
		assertThat(holder.state()).isEqualTo(State.HELD);
		assertThat(holder.isOn(0, session.generation())).isTrue();
		// and its release runs on the same session
		assertThat(this.guard.finishing(new Lease(holder.key, holder.token))).isSameAs(holder);
		Operation release = Operation.release(holder);
		assertThat(scheduler.runOn(session, release, System.nanoTime() + TimeUnit.SECONDS.toNanos(10))).isTrue();
		assertThat(release.succeeded()).isTrue();
		assertThat(holder.state()).isEqualTo(State.GONE);
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aClaimStillWaitingAtItsDeadlineIsCancelledUnstarted(boolean batching) throws Exception {
		SessionScheduler scheduler = scheduler(batching);
		LockSession session = this.pool.get(0);
		// taken by another thread: the run lock is re-entrant
		CountDownLatch taken = new CountDownLatch(1);
		CountDownLatch free = new CountDownLatch(1);
		CompletableFuture<Void> occupier = CompletableFuture.runAsync(() -> {
			session.tryRun();
			taken.countDown();
			try {
				free.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				session.endRun();
			}
		});
		assertThat(taken.await(5, TimeUnit.SECONDS)).isTrue();
		try {
			Holder holder = enter("scheduler-" + System.nanoTime());
			long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
			Operation claim = Operation.claim(holder, deadline);
			assertThat(scheduler.runClaim(claim, deadline)).isFalse();
			assertThat(claim.isQueued()).isFalse();
			assertThat(claim.isDone()).isFalse();
			assertThat(this.pool.claims()).doesNotContain(claim);
		}
		finally {
			free.countDown();
			occupier.get(5, TimeUnit.SECONDS);
		}
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void everySessionConnectionGetsANewGenerationAndDiscardingFreesItsLocks(boolean batching) throws Exception {
		scheduler(batching);
		LockSession session = this.pool.get(0);
		assertThat(session.tryRun()).isTrue();
		try {
			assertThat(this.pool.openIfNeeded(session)).isTrue();
			assertThat(this.pool.openIfNeeded(session)).isFalse();
			long first = session.generation();
			SqlPipeline.run(session.connection(), false, 5, List.of(new Sql("SELECT pg_advisory_lock(7, 7)")));
			assertThat(this.pool.discard(session)).isEqualTo(first);
			assertThat(session.isOpen()).isFalse();
			Boolean free = TestDatabases.postgres()
				.jdbc()
				.queryForObject("SELECT pg_try_advisory_lock(7, 7) AND pg_advisory_unlock(7, 7)", Boolean.class);
			assertThat(free).isTrue();
			assertThat(this.pool.openIfNeeded(session)).isTrue();
			assertThat(session.generation()).isGreaterThan(first);
		}
		finally {
			session.endRun();
		}
	}

}
