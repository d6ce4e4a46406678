package dev.idempo.store;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

import dev.idempo.store.memory.InMemoryLockingStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link OffloadedLockingStore}: a claim whose subscriber cancels while the
 * blocking claim runs is neither interrupted nor left holding its key.
 *
 * @author idempo
 */
class OffloadedLockingStoreTests {

	private static final Duration LOCK_TTL = Duration.ofSeconds(30);

	private final InMemoryLockingStore memory = new InMemoryLockingStore(java.time.Clock.systemUTC(), 1000,
			1024 * 1024);

	/**
	 * Many times over, since the cancel races the subscription's own start: from the
	 * parallel scheduler the claim may enter the store before its subscriber is set up.
	 */
	@RepeatedTest(20)
	void aClaimCancelledWhileItRunsReleasesTheKeyItAcquired(RepetitionInfo repetition) throws Exception {
		GatedStore gated = new GatedStore(this.memory);
		OffloadedLockingStore store = new OffloadedLockingStore(gated);
		String key = String.format("%064x", repetition.getCurrentRepetition());
		Disposable subscription = (repetition.getCurrentRepetition() % 2 == 0)
				? store.claim(key, LOCK_TTL).subscribeOn(Schedulers.parallel()).subscribe()
				: store.claim(key, LOCK_TTL).subscribe();
		assertThat(gated.entered.await(10, TimeUnit.SECONDS)).isTrue();
		subscription.dispose();
		gated.open.countDown();
		assertThat(gated.finished.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(gated.interrupted.get()).as("interrupted claims").isZero();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		ClaimResult claim;
		do {
			claim = this.memory.claim(key, LOCK_TTL);
		}
		while (!(claim instanceof ClaimResult.Acquired) && System.nanoTime() < deadline && pause());
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aClaimDeliveredToItsSubscriberIsItsToComplete() {
		OffloadedLockingStore store = new OffloadedLockingStore(this.memory);
		String key = "b".repeat(64);
		ClaimResult claim = store.claim(key, LOCK_TTL).block(Duration.ofSeconds(10));
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
		Lease lease = ((ClaimResult.Acquired) claim).lease();
		assertThat(store.claim(key, LOCK_TTL).block(Duration.ofSeconds(10))).isInstanceOf(ClaimResult.InProgress.class);
		StoredRecord record = new StoredRecord("fp", new byte[] { 1, 2 });
		assertThat(store.complete(lease, record, Duration.ofMinutes(1)).block(Duration.ofSeconds(10))).isTrue();
		assertThat(store.claim(key, LOCK_TTL).block(Duration.ofSeconds(10))).isInstanceOf(ClaimResult.Completed.class);
	}

	private static boolean pause() {
		try {
			Thread.sleep(10);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * A real store whose claims wait at a gate, as a busy JDBC store's do for a session.
	 */
	static final class GatedStore implements LockingStore {

		final CountDownLatch entered = new CountDownLatch(1);

		final CountDownLatch open = new CountDownLatch(1);

		final CountDownLatch finished = new CountDownLatch(1);

		final AtomicInteger interrupted = new AtomicInteger();

		private final LockingStore delegate;

		GatedStore(LockingStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public ClaimResult claim(String key, Duration lockTtl) {
			this.entered.countDown();
			try {
				this.open.await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				this.interrupted.incrementAndGet();
				Thread.currentThread().interrupt();
			}
			try {
				return this.delegate.claim(key, lockTtl);
			}
			finally {
				this.finished.countDown();
			}
		}

		@Override
		public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
			return this.delegate.complete(lease, record, ttl);
		}

		@Override
		public boolean release(Lease lease) {
			return this.delegate.release(lease);
		}

	}

}
