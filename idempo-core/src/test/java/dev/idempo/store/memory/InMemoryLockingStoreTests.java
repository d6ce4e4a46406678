package dev.idempo.store.memory;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreContractTest;
import dev.idempo.testsupport.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The contract, plus the memory store's own bounds.
 *
 * @author idempo
 */
class InMemoryLockingStoreTests extends LockingStoreContractTest {

	private final MutableClock clock = new MutableClock();

	@Override
	protected LockingStore createStore() {
		return new InMemoryLockingStore(this.clock, 10_000, 64L * 1024 * 1024);
	}

	@Override
	protected void breakLease(Lease lease) {
		this.clock.advance(LOCK_TTL.plusSeconds(1));
	}

	@Override
	protected void elapse(Duration duration) {
		this.clock.advance(duration);
	}

	@Override
	protected Duration tick() {
		return Duration.ofMillis(1);
	}

	@Test
	void evictsOldestRecordsBeyondMaxEntries() {
		InMemoryLockingStore store = new InMemoryLockingStore(this.clock, 3, 1024 * 1024);
		String[] keys = { newKey(), newKey(), newKey(), newKey() };
		for (String key : keys) {
			Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
			assertThat(store.complete(lease, record(key), TTL)).isTrue();
		}
		assertThat(store.size()).isEqualTo(3);
		assertThat(store.claim(keys[0], LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store.claim(keys[3], LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
	}

	@Test
	void countsEvictionsBeforeExpiryApartFromExpiredOnes() {
		InMemoryLockingStore store = new InMemoryLockingStore(this.clock, 2, 1024 * 1024);
		for (int i = 0; i < 3; i++) {
			String key = newKey();
			Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
			assertThat(store.complete(lease, record(key), TTL)).isTrue();
		}
		assertThat(store.capacityEvictions()).isEqualTo(1);
		assertThat(store.expiredEvictions()).isZero();
		this.clock.advance(TTL.plusSeconds(1));
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		assertThat(store.complete(lease, record(key), TTL)).isTrue();
		assertThat(store.capacityEvictions()).isEqualTo(1);
		assertThat(store.expiredEvictions()).isEqualTo(2);
		assertThat(store.size()).isEqualTo(1);
	}

	@Test
	void fullStoreThatRefusesKeepsItsRecordsAndRefusesNewClaimsUntilTheyExpire() {
		InMemoryLockingStore store = new InMemoryLockingStore(this.clock, 2, 1024 * 1024, true);
		String[] keys = { newKey(), newKey() };
		for (String key : keys) {
			Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
			assertThat(store.complete(lease, record(key), TTL)).isTrue();
		}
		assertThatExceptionOfType(dev.idempo.store.LockingStoreException.class)
			.isThrownBy(() -> store.claim(newKey(), LOCK_TTL))
			.withMessageContaining("when-full=refuse");
		assertThat(store.capacityEvictions()).isZero();
		assertThat(store.claim(keys[0], LOCK_TTL)).as("replays still answered")
			.isInstanceOf(ClaimResult.Completed.class);
		this.clock.advance(TTL.plusSeconds(1));
		assertThat(store.claim(newKey(), LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store.expiredEvictions()).isEqualTo(2);
	}

	@Test
	void fullStoreThatRefusesFindsExpiredRecordsBehindALongerLivedOne() {
		InMemoryLockingStore store = new InMemoryLockingStore(this.clock, 2, 1024 * 1024, true);
		String longLived = newKey();
		Lease first = ((ClaimResult.Acquired) store.claim(longLived, LOCK_TTL)).lease();
		assertThat(store.complete(first, record(longLived), TTL.multipliedBy(10))).isTrue();
		String shortLived = newKey();
		Lease second = ((ClaimResult.Acquired) store.claim(shortLived, LOCK_TTL)).lease();
		assertThat(store.complete(second, record(shortLived), TTL)).isTrue();
		this.clock.advance(TTL.plusSeconds(1));
		assertThat(store.claim(newKey(), LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store.claim(longLived, LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
	}

	@Test
	void evictsOldestRecordsBeyondMaxBytes() {
		InMemoryLockingStore store = new InMemoryLockingStore(this.clock, 1000, 3000);
		String[] keys = { newKey(), newKey(), newKey() };
		for (String key : keys) {
			Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
			assertThat(store.complete(lease, new dev.idempo.store.StoredRecord("fp", new byte[1200]), TTL)).isTrue();
		}
		assertThat(store.sizeInBytes()).isLessThanOrEqualTo(3000);
		assertThat(store.claim(keys[0], LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store.claim(keys[2], LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
	}

	@Test
	void expiredRecordsStopCountingOnceReplaced() {
		InMemoryLockingStore store = new InMemoryLockingStore(this.clock, 10, 1024 * 1024);
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store.claim(key, LOCK_TTL)).lease();
		store.complete(lease, record("x"), Duration.ofSeconds(1));
		assertThat(store.size()).isEqualTo(1);
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store.size()).isZero();
		assertThat(store.sizeInBytes()).isZero();
	}

}
