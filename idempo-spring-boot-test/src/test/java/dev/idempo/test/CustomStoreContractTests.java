package dev.idempo.test;

import java.time.Duration;

import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreContractTest;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.testsupport.MutableClock;

/**
 * The published store contract, run from the test kit as a user's own store would run it:
 * a subclass names the store and how its leases break.
 */
class CustomStoreContractTests extends LockingStoreContractTest {

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

}
