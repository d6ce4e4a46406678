package dev.idempo.flow;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Lease renewal against the memory store on the real clock: leases outlive their TTL
 * while renewed, lapse once stopped, and are reported lost when renewal fails.
 *
 * @author idempo
 */
class LeaseRenewerTests {

	private static final Duration LOCK_TTL = Duration.ofMillis(150);

	private final LeaseRenewer renewer = new LeaseRenewer();

	private final CountingStore store = new CountingStore(
			new InMemoryLockingStore(Clock.systemUTC(), 100, 1024 * 1024));

	@AfterEach
	void destroy() {
		this.renewer.destroy();
	}

	@Test
	void renewedLeaseOutlivesItsTtlAndLapsesOnceStopped() {
		// long enough that a stalled test thread still finds the last renewal in force
		Duration lockTtl = Duration.ofMillis(600);
		Lease lease = ((ClaimResult.Acquired) this.store.claim("a", lockTtl)).lease();
		LeaseRenewer.Renewal renewal = this.renewer.renew(this.store, lease, lockTtl);
		// a renewal is due a third of the TTL after the last one: three mean a whole TTL
		// has passed since the claim
		await().atMost(Duration.ofSeconds(10)).until(() -> this.store.renewals.get() >= 3);
		assertThat(this.store.claim("a", lockTtl)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(renewal.isLost()).isFalse();
		renewal.stop();
		int renewals = this.store.renewals.get();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.store.claim("a", lockTtl) instanceof ClaimResult.Acquired);
		// at most one renewal was already running when it was stopped
		assertThat(this.store.renewals.get()).isLessThanOrEqualTo(renewals + 1);
	}

	@Test
	void renewalStoppedBeforeItIsDueNeverCallsTheStore() {
		Lease lease = claim("b");
		this.renewer.renew(this.store, lease, LOCK_TTL).stop();
		Lease other = claim("c");
		LeaseRenewer.Renewal running = this.renewer.renew(this.store, other, LOCK_TTL);
		// while another lease is renewed several times over
		await().atMost(Duration.ofSeconds(10)).until(() -> this.store.renewedKeys.toString().contains("ccc"));
		running.stop();
		assertThat(this.store.renewedKeys.toString()).doesNotContain("b");
	}

	@Test
	void refusedRenewalIsReportedLost() {
		Lease lease = claim("d");
		this.store.refuse = true;
		LeaseRenewer.Renewal renewal = this.renewer.renew(this.store, lease, LOCK_TTL);
		await().atMost(Duration.ofSeconds(10)).until(renewal::isLost);
		int renewals = this.store.renewals.get();
		Lease next = claim("e");
		this.store.refuse = false;
		LeaseRenewer.Renewal nextRenewal = this.renewer.renew(this.store, next, LOCK_TTL);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.store.renewals.get() >= renewals + 3);
		nextRenewal.stop();
		assertThat(this.store.renewedKeys.toString().chars().filter((c) -> c == 'd')).hasSize(1);
	}

	@Test
	void renewalFailingForAWholeTtlIsReportedLost() {
		Lease lease = claim("f");
		this.store.fail = true;
		LeaseRenewer.Renewal renewal = this.renewer.renew(this.store, lease, LOCK_TTL);
		await().atMost(Duration.ofSeconds(10)).until(renewal::isLost);
		assertThat(this.store.renewals.get()).isPositive();
	}

	private Lease claim(String key) {
		return ((ClaimResult.Acquired) this.store.claim(key, LOCK_TTL)).lease();
	}

	/** The memory store, counting renewals, which it can refuse or fail. */
	/**
	 * A reactive store whose renewal blocks the thread that subscribes to it (an
	 * application's own store over blocking I/O) delays only its own lease: the other
	 * leases in flight, blocking and reactive, are still renewed.
	 */
	@Test
	void reactiveRenewalThatBlocksItsSubscriberDelaysNoOtherLease() throws Exception {
		Duration lockTtl = Duration.ofMillis(300);
		CountDownLatch gate = new CountDownLatch(1);
		AtomicInteger blockedRenewals = new AtomicInteger();
		ReactiveLockingStore inline = new InlineLockingStore(this.store);
		ReactiveLockingStore blocking = new ReactiveLockingStore() {

			@Override
			public Mono<ClaimResult> claim(String key, Duration ttl) {
				return inline.claim(key, ttl);
			}

			@Override
			public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
				return inline.complete(lease, record, ttl);
			}

			@Override
			public Mono<Boolean> release(Lease lease) {
				return inline.release(lease);
			}

			@Override
			public Mono<Boolean> renew(Lease lease, Duration ttl) {
				blockedRenewals.incrementAndGet();
				// blocks whoever subscribes, as Mono.fromCallable over blocking I/O does
				return Mono.fromCallable(() -> gate.await(30, TimeUnit.SECONDS));
			}

			@Override
			public boolean leaseExpires() {
				return true;
			}

		};
		Lease stuck = ((ClaimResult.Acquired) this.store.claim("stuck", lockTtl)).lease();
		Lease healthy = ((ClaimResult.Acquired) this.store.claim("healthy", lockTtl)).lease();
		LeaseRenewer.Renewal stuckRenewal = this.renewer.renew(blocking, stuck, lockTtl);
		LeaseRenewer.Renewal healthyRenewal = this.renewer.renew(inline, healthy, lockTtl);
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> blockedRenewals.get() >= 1);
			int renewals = this.store.renewals.get();
			// three renewals of the healthy lease after the stuck one blocked: a whole
			// TTL
			await().atMost(Duration.ofSeconds(10)).until(() -> this.store.renewals.get() >= renewals + 3);
			assertThat(healthyRenewal.isLost()).isFalse();
			assertThat(this.store.claim("healthy", lockTtl)).isInstanceOf(ClaimResult.InProgress.class);
		}
		finally {
			gate.countDown();
			stuckRenewal.stop();
			healthyRenewal.stop();
		}
	}

	private static final class CountingStore implements LockingStore {

		private final LockingStore delegate;

		final AtomicInteger renewals = new AtomicInteger();

		final StringBuffer renewedKeys = new StringBuffer();

		volatile boolean refuse;

		volatile boolean fail;

		CountingStore(LockingStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public ClaimResult claim(String key, Duration lockTtl) {
			return this.delegate.claim(key, lockTtl);
		}

		@Override
		public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
			return this.delegate.complete(lease, record, ttl);
		}

		@Override
		public boolean release(Lease lease) {
			return this.delegate.release(lease);
		}

		@Override
		public boolean renew(Lease lease, Duration lockTtl) {
			this.renewedKeys.append(lease.key());
			this.renewals.incrementAndGet();
			if (this.fail) {
				throw new LockingStoreException("store down");
			}
			return !this.refuse && this.delegate.renew(lease, lockTtl);
		}

		@Override
		public boolean leaseExpires() {
			return true;
		}

	}

}
