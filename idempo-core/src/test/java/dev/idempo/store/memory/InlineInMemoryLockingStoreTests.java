package dev.idempo.store.memory;

import java.time.Duration;

import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.ReactiveLockingStoreContractTest;
import dev.idempo.testsupport.MutableClock;

/**
 * The contract through {@link InlineLockingStore} over the in-memory store, every
 * operation on Reactor's non-blocking threads under BlockHound: the proof that the
 * in-memory store may run on the subscriber's thread.
 *
 * @author idempo
 */
class InlineInMemoryLockingStoreTests extends ReactiveLockingStoreContractTest {

	private final MutableClock clock = new MutableClock();

	@Override
	protected LockingStore createBlockingStore() {
		return new InMemoryLockingStore(this.clock, 10_000, 64L * 1024 * 1024);
	}

	@Override
	protected ReactiveLockingStore createReactiveStore(LockingStore blockingStore) {
		return new InlineLockingStore(blockingStore);
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
