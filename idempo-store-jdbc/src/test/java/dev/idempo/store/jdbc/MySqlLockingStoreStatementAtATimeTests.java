package dev.idempo.store.jdbc;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The contract on MySQL or MariaDB through connections that refuse multi-statements, as a
 * user-supplied data source may: every statement is its own round trip. So a fault can
 * hit one statement of a batch, which the fault tests below rely on.
 *
 * @author idempo
 */
class MySqlLockingStoreStatementAtATimeTests extends MySqlLockingStoreTests {

	@Override
	DataSource dataSource(TestDatabase database) {
		return database.dataSource();
	}

	/**
	 * A complete alone is one auto-committed statement, without a transaction of its own:
	 * when its unlock is sent, another connection already reads the record.
	 */
	@Test
	void aCompleteAloneIsCommittedBeforeItsUnlockIsSent() {
		FaultInjectingDataSource watched = new FaultInjectingDataSource(dataSource());
		JdbcLockingStore store = extraStore(watched, settings().withLockSessions(1));
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		AtomicInteger rowsAtUnlock = new AtomicInteger(-1);
		watched.onPrepare((connection, sql) -> {
			if (FaultInjectingDataSource.isUnlock(sql)) {
				// read on another connection: only committed rows
				rowsAtUnlock.compareAndSet(-1, rows(table(), key));
			}
		});
		assertThat(store.complete(lease, record("committed"), TTL)).isTrue();
		assertThat(rowsAtUnlock).hasValue(1);
		assertThat(((ClaimResult.Completed) store().claim(key, LOCK_TTL)).record()).isEqualTo(record("committed"));
	}

	/**
	 * A failed batch whose ROLLBACK fails too may have left a transaction open, whose
	 * rows a later statement would commit after their locks were freed: the session is
	 * closed, which ends the transaction and frees the lock, and the complete stored
	 * nothing.
	 */
	@Test
	void aFailedBatchWhoseRollbackFailsEndsItsSession() {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		JdbcLockingStore store = extraStore(faulty,
				settings().withLockSessions(1).withSessionCheckInterval(Duration.ofSeconds(30)));
		JdbcLockingStore other = extraStore(settings());
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		faulty.fail((sql) -> FaultInjectingDataSource.isStore(sql) || sql.equals("ROLLBACK"),
				() -> new SQLException("injected"));
		assertThat(store.complete(lease, record("lost"), TTL)).isFalse();
		faulty.heal();
		assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(rows(table(), key)).isZero();
	}

	/**
	 * An Error between the statements of a transaction of two completes leaves the
	 * transaction open: the session is closed at once, else the next complete alone
	 * (auto-commit) would join that transaction and free its lock before any commit.
	 */
	@Test
	void anErrorWhileStoringEndsItsSession() throws Exception {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		JdbcLockingStore store = extraStore(faulty,
				settings().withLockSessions(1).withSessionCheckInterval(Duration.ofSeconds(30)));
		List<Lease> leases = List.of(((ClaimResult.Acquired) store.claim(newKey(), LOCK_TTL)).lease(),
				((ClaimResult.Acquired) store.claim(newKey(), LOCK_TTL)).lease());
		AtomicInteger stores = new AtomicInteger();
		faulty.fail((sql) -> FaultInjectingDataSource.isStore(sql) && stores.incrementAndGet() == 2,
				() -> new AssertionError("injected error"));
		Runnable letGo = store.occupySession(0);
		List<FutureTask<Boolean>> completes = new ArrayList<>();
		for (Lease lease : leases) {
			FutureTask<Boolean> complete = new FutureTask<>(() -> store.complete(lease, record("lost"), TTL));
			new Thread(complete).start();
			completes.add(complete);
		}
		await().atMost(Duration.ofSeconds(4)).until(() -> store.session(0).completes().size() == 2);
		letGo.run();
		for (FutureTask<Boolean> complete : completes) {
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> complete.get(10, TimeUnit.SECONDS))
				.withCauseInstanceOf(AssertionError.class);
		}
		faulty.heal();
		assertThat(stores).hasValue(2);
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		assertThat(store.complete(lease, record("committed"), TTL)).isTrue();
		// committed, read on another connection
		assertThat(rows(table(), key)).isOne();
		assertThat(rows(table(), leases.get(0).key())).isZero();
	}

	/**
	 * A complete whose batch failed after COMMIT is settled "stored" from the facts; if
	 * the session then dies while its lock is being freed (settleLocks), the holder must
	 * still leave the KeyGuard: a later claim of the key in this JVM replays the stored
	 * record instead of waiting the timeout and answering InProgress.
	 */
	@Test
	void storedCompleteIsForgottenWhenSessionDiesWhileFreeingItsLock() {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		JdbcLockingStore store = extraStore(faulty,
				settings().withLockSessions(1)
					.withTimeout(Duration.ofSeconds(1))
					.withSessionCheckInterval(Duration.ofSeconds(30)));
		JdbcLockingStore other = extraStore(settings());
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		AtomicInteger unlocks = new AtomicInteger();
		// 1st unlock (after COMMIT in the batch): a statement failure on a live session;
		// 2nd unlock (settleLocks): the connection fails
		faulty.fail((sql) -> FaultInjectingDataSource.isUnlock(sql) && unlocks.incrementAndGet() <= 2,
				() -> (unlocks.get() == 1) ? new SQLException("injected statement failure")
						: new SQLNonTransientConnectionException("injected connection failure", "08006"));
		assertThat(store.complete(lease, record("stored"), TTL)).isTrue();
		faulty.heal();
		assertThat(unlocks).hasValue(2);
		// committed, and the lock died with the session: another instance replays it
		assertThat(((ClaimResult.Completed) other.claim(key, LOCK_TTL)).record()).isEqualTo(record("stored"));
		// this instance too, without waiting for the timeout
		long start = System.nanoTime();
		ClaimResult again = store.claim(key, LOCK_TTL);
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(again).as("claim in this JVM after %s", took).isInstanceOf(ClaimResult.Completed.class);
	}

	/**
	 * An Error (or any bug exception) thrown by runBatch after the runner's own claim was
	 * settled Acquired propagates to the runner's claim(), whose finally must not forget
	 * the HELD holder: its lock is queued for unlock, so the key becomes free although
	 * the session stays alive.
	 */
	@Test
	void errorAfterOwnClaimSettledStillFreesItsLock() throws Exception {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		JdbcLockingStore store = extraStore(faulty,
				settings().withLockSessions(1)
					.withTimeout(Duration.ofSeconds(3))
					.withSessionCheckInterval(Duration.ofSeconds(30)));
		JdbcLockingStore other = extraStore(settings());
		// open the session
		Lease warm = ((ClaimResult.Acquired) store.claim(newKey(), LOCK_TTL)).lease();
		assertThat(store.release(warm)).isTrue();
		String first = newKey();
		String second = newKey();
		Map<String, String> otherKeyOf = new ConcurrentHashMap<>(Map.of("claim-first", second, "claim-second", first));
		AtomicBoolean recordArmed = new AtomicBoolean(true);
		AtomicBoolean errorArmed = new AtomicBoolean(true);
		// between the lock statement and the read, the other claim's key gets a record
		// (an owner elsewhere committed just then): that claim gives its lock back
		faulty.onPrepare((connection, sql) -> {
			String otherKey = otherKeyOf.get(Thread.currentThread().getName());
			if (otherKey != null && sql.startsWith("SELECT fingerprint, response, storage_key")
					&& recordArmed.compareAndSet(true, false)) {
				database().jdbc()
					.update("INSERT INTO " + table() + " (storage_key, fingerprint, response, created_at, expires_at)"
							+ " VALUES (?, 'fp', ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)", otherKey,
							new byte[] { 1 });
			}
		});
		// the give-back unlock throws an Error (an OOM, a driver assertion)
		faulty.fail((sql) -> FaultInjectingDataSource.isUnlock(sql) && !recordArmed.get()
				&& errorArmed.compareAndSet(true, false), () -> new AssertionError("injected error"));
		Occupier occupier = new Occupier(store, 0);
		FutureTask<ClaimResult> firstClaim = new FutureTask<>(() -> store.claim(first, LOCK_TTL));
		FutureTask<ClaimResult> secondClaim = new FutureTask<>(() -> store.claim(second, LOCK_TTL));
		new Thread(firstClaim, "claim-first").start();
		Thread.sleep(100);
		new Thread(secondClaim, "claim-second").start();
		Thread.sleep(100);
		occupier.free();
		Object firstOutcome = outcome(firstClaim);
		Object secondOutcome = outcome(secondClaim);
		faulty.heal();
		assertThat(recordArmed).isFalse();
		assertThat(errorArmed).isFalse();
		// the runner got the Error although its own claim had been Acquired
		String runnerKey = (firstOutcome instanceof AssertionError) ? first : second;
		Object giver = (runnerKey == first) ? secondOutcome : firstOutcome;
		assertThat(giver).isInstanceOf(ClaimResult.Completed.class);
		// the runner's caller was told the claim failed, so its key must become free
		Thread.sleep(1000);
		ClaimResult elsewhere = other.claim(runnerKey, LOCK_TTL);
		assertThat(elsewhere).as("claim of the failed claim's key from another instance")
			.isInstanceOf(ClaimResult.Acquired.class);
	}

	private static Object outcome(FutureTask<ClaimResult> task) throws InterruptedException {
		try {
			return task.get(10, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			return ex.getCause();
		}
		catch (java.util.concurrent.TimeoutException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
