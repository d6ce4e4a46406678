package dev.idempo.test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreContractTest;
import dev.idempo.store.memory.InMemoryLockingStore;

/**
 * The published store contract, run from the test kit as a user's own store would run it:
 * a subclass names the store and how its leases break.
 */
class CustomStoreContractTest extends LockingStoreContractTest {

	private final SteppedClock clock = new SteppedClock();

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

	/** A clock the test moves. */
	static final class SteppedClock extends Clock {

		private volatile Instant now = Instant.parse("2026-01-01T00:00:00Z");

		void advance(Duration duration) {
			this.now = this.now.plus(duration);
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

		@Override
		public Instant instant() {
			return this.now;
		}

	}

}
