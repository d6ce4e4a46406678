package dev.idempo.store.jdbc;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStoreException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The contract and the SQL store tests on PostgreSQL with batching off: every operation
 * runs alone, one statement per round trip.
 *
 * @author idempo
 */
class PostgresPlainLockingStoreTests extends PostgresLockingStoreTests {

	@Override
	JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings) {
		return super.newStore(dataSource, settings.withBatching(false));
	}

	@Test
	void runsEveryOperationAlone() {
		assertThat(((JdbcLockingStore) store()).settings().batching()).isFalse();
	}

	/**
	 * A claim whose batch fails after its lock was taken, and whose lock then cannot be
	 * freed either, is lost with the session that is ended to free it: it must not run
	 * again (its holder has left the guard), or it would hold a lock that no lease can
	 * give back.
	 */
	@Test
	void aClaimLostWithASessionEndedToFreeItsLockDoesNotRunAgain() {
		FaultInjectingDataSource faulty = new FaultInjectingDataSource(dataSource());
		// no session check: it would run the failing unlocks at a time of its own
		JdbcLockingStore store = extraStore(faulty,
				settings().withLockSessions(1).withSessionCheckInterval(Duration.ofHours(1)));
		JdbcLockingStore other = extraStore(settings());
		String released = newKey();
		String claimed = newKey();
		Lease releasedLease = ((ClaimResult.Acquired) store.claim(released, LOCK_TTL)).lease();
		AtomicInteger unlocks = new AtomicInteger();
		faulty.onPrepare((connection, sql) -> {
			if (FaultInjectingDataSource.isUnlock(sql)) {
				unlocks.incrementAndGet();
			}
		});
		AtomicInteger reads = new AtomicInteger();
		// every unlock fails on the live session; the claim's read fails once, after its
		// lock was taken
		faulty.fail(
				(sql) -> FaultInjectingDataSource.isUnlock(sql)
						|| (sql.contains("SELECT fingerprint, response, c.n") && reads.getAndIncrement() == 0),
				() -> new SQLException("injected"));
		// the unlock is queued, and its drain fails once more (the failures in a row
		// count towards ending the session)
		assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> store.release(releasedLease));
		await().atMost(Duration.ofSeconds(10)).until(() -> unlocks.get() >= 2);
		ClaimResult result;
		try {
			result = store.claim(claimed, LOCK_TTL);
		}
		catch (LockingStoreException ex) {
			result = null;
		}
		faulty.heal();
		if (result instanceof ClaimResult.Acquired acquired) {
			assertThat(store.complete(acquired.lease(), record("claimed"), TTL)).as("complete of the lease it got")
				.isTrue();
		}
		// either way no lock is left behind: the key is free, or completed, for everyone
		await().atMost(Duration.ofSeconds(5)).until(() -> {
			ClaimResult again = other.claim(claimed, LOCK_TTL);
			if (again instanceof ClaimResult.Acquired acquired) {
				return other.release(acquired.lease());
			}
			return again instanceof ClaimResult.Completed;
		});
	}

}
