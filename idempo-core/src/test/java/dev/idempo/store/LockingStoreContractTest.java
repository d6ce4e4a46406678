package dev.idempo.store;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The behaviour every {@link LockingStore} must have, run unchanged against each store on
 * a real server. A subclass supplies the store and two hooks: how time passes, and how a
 * claim is lost behind its owner's back.
 *
 * @author idempo
 */
public abstract class LockingStoreContractTest {

	protected static final Duration LOCK_TTL = Duration.ofSeconds(30);

	protected static final Duration TTL = Duration.ofHours(1);

	private LockingStore store;

	/**
	 * Creates the store under test; called before every test.
	 * @return the store
	 */
	protected abstract LockingStore createStore();

	/**
	 * Makes {@code lease} lose its claim as infrastructure would (the lease expires, the
	 * lock session dies), without its owner knowing.
	 * @param lease the lease to break
	 */
	protected abstract void breakLease(Lease lease);

	/**
	 * Lets {@code duration} pass for the store. Stores with an injectable clock advance
	 * it; the default waits in real time (tests then poll for the expected state).
	 * @param duration how much time passes
	 */
	protected void elapse(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The shortest record TTL the store honours precisely enough for the expiry test.
	 * @return the short TTL
	 */
	protected Duration shortTtl() {
		return Duration.ofSeconds(1);
	}

	/**
	 * Called after every test, after the store is no longer used.
	 * @param store the store
	 */
	protected void destroyStore(LockingStore store) {
	}

	@BeforeEach
	void setUpStore() {
		this.store = createStore();
	}

	@AfterEach
	void tearDownStore() {
		destroyStore(this.store);
	}

	protected LockingStore store() {
		return this.store;
	}

	protected static String newKey() {
		return UUID.randomUUID().toString().replace("-", "") + UUID.randomUUID().toString().replace("-", "");
	}

	protected static StoredRecord record(String text) {
		return new StoredRecord("fp-" + text, text.getBytes(StandardCharsets.UTF_8));
	}

	protected Lease acquire(String key) {
		ClaimResult claim = this.store.claim(key, LOCK_TTL);
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
		return ((ClaimResult.Acquired) claim).lease();
	}

	@Test
	void claimOfFreeKeyIsAcquiredWithTheKey() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(lease.key()).isEqualTo(key);
		assertThat(lease.token()).isNotBlank();
	}

	@Test
	void claimWhileHeldIsInProgress() {
		String key = newKey();
		acquire(key);
		assertThat(this.store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
	}

	@Test
	void completedRecordIsReturnedByLaterClaims() {
		String key = newKey();
		Lease lease = acquire(key);
		StoredRecord record = record("first response");
		assertThat(this.store.complete(lease, record, TTL)).isTrue();
		for (int i = 0; i < 3; i++) {
			ClaimResult claim = this.store.claim(key, LOCK_TTL);
			assertThat(claim).isInstanceOf(ClaimResult.Completed.class);
			StoredRecord stored = ((ClaimResult.Completed) claim).record();
			assertThat(stored.fingerprint()).isEqualTo(record.fingerprint());
			assertThat(stored.response()).isEqualTo(record.response());
		}
	}

	@Test
	void binaryRecordRoundTripsByteForByte() {
		String key = newKey();
		byte[] body = new byte[1024 * 1024 + 17];
		new Random(42).nextBytes(body);
		Lease lease = acquire(key);
		assertThat(this.store.complete(lease, new StoredRecord("fp", body), TTL)).isTrue();
		ClaimResult claim = this.store.claim(key, LOCK_TTL);
		assertThat(((ClaimResult.Completed) claim).record().response()).isEqualTo(body);
	}

	@Test
	void releaseFreesTheKeyForANewClaim() {
		String key = newKey();
		Lease first = acquire(key);
		assertThat(this.store.release(first)).isTrue();
		Lease second = acquire(key);
		assertThat(second.token()).isNotEqualTo(first.token());
	}

	@Test
	void completeAfterReleaseFails() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(this.store.release(lease)).isTrue();
		assertThat(this.store.complete(lease, record("late"), TTL)).isFalse();
		acquire(key);
	}

	@Test
	void secondCompleteWithTheSameLeaseFails() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(this.store.complete(lease, record("one"), TTL)).isTrue();
		assertThat(this.store.complete(lease, record("two"), TTL)).isFalse();
		assertThat(this.store.release(lease)).isFalse();
		ClaimResult claim = this.store.claim(key, LOCK_TTL);
		assertThat(((ClaimResult.Completed) claim).record()).isEqualTo(record("one"));
	}

	@Test
	void foreignTokenCannotCompleteOrRelease() {
		String key = newKey();
		Lease owner = acquire(key);
		Lease impostor = new Lease(key, UUID.randomUUID().toString());
		assertThat(this.store.complete(impostor, record("impostor"), TTL)).isFalse();
		assertThat(this.store.release(impostor)).isFalse();
		assertThat(this.store.renew(impostor, LOCK_TTL) && this.store.leaseExpires()).isFalse();
		assertThat(this.store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.store.complete(owner, record("owner"), TTL)).isTrue();
		ClaimResult claim = this.store.claim(key, LOCK_TTL);
		assertThat(((ClaimResult.Completed) claim).record()).isEqualTo(record("owner"));
	}

	@Test
	void leaseLostBehindItsOwnersBackNeverOverwritesTheNewOwner() {
		String key = newKey();
		Lease late = acquire(key);
		breakLease(late);
		Lease current = awaitAcquired(key);
		assertThat(this.store.complete(late, record("late"), TTL)).isFalse();
		assertThat(this.store.release(late)).isFalse();
		assertThat(this.store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.store.complete(current, record("current"), TTL)).isTrue();
		assertThat(this.store.release(late)).isFalse();
		ClaimResult claim = this.store.claim(key, LOCK_TTL);
		assertThat(((ClaimResult.Completed) claim).record()).isEqualTo(record("current"));
	}

	@Test
	void leaseLostBehindItsOwnersBackCannotComplete() {
		String key = newKey();
		Lease lease = acquire(key);
		breakLease(lease);
		assertThat(this.store.complete(lease, record("late"), TTL)).isFalse();
		awaitAcquired(key);
	}

	@Test
	void renewedLeaseOutlivesItsFirstTtl() {
		if (!this.store.leaseExpires()) {
			assertThat(this.store.renew(acquire(newKey()), LOCK_TTL)).isTrue();
			return;
		}
		String key = newKey();
		ClaimResult claim = this.store.claim(key, Duration.ofSeconds(2));
		Lease lease = ((ClaimResult.Acquired) claim).lease();
		assertThat(this.store.renew(lease, Duration.ofMinutes(5))).isTrue();
		elapse(Duration.ofSeconds(3));
		assertThat(this.store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.store.complete(lease, record("renewed"), TTL)).isTrue();
	}

	@Test
	void renewAfterLossFails() {
		String key = newKey();
		Lease lease = acquire(key);
		breakLease(lease);
		if (this.store.leaseExpires()) {
			assertThat(this.store.renew(lease, LOCK_TTL)).isFalse();
		}
		assertThat(this.store.complete(lease, record("lost"), TTL)).isFalse();
	}

	@Test
	void expiredRecordIsAsIfItNeverExisted() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(this.store.complete(lease, record("short-lived"), shortTtl())).isTrue();
		assertThat(this.store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
		elapse(shortTtl().plusMillis(1));
		awaitAcquired(key);
	}

	/**
	 * A claim that runs while its key's record expires answers the record or acquires the
	 * key, never "in progress": nobody holds it. A store whose claim looks at the record
	 * twice (whether it exists, then what it is) must not take the record's expiry
	 * between the two for a holder. Claims run back to back on each key until it is
	 * acquired, so that some straddle the expiry.
	 */
	@Test
	void aClaimAsItsRecordExpiresIsNeverInProgress() {
		for (int i = 0; i < 20; i++) {
			String key = newKey();
			assertThat(this.store.complete(acquire(key), record("expiring"), Duration.ofMillis(50))).isTrue();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
			ClaimResult claim;
			do {
				claim = this.store.claim(key, LOCK_TTL);
				assertThat(claim).as("key %d", i).isNotInstanceOf(ClaimResult.InProgress.class);
				elapse(tick());
			}
			while (!(claim instanceof ClaimResult.Acquired) && System.nanoTime() < deadline);
			assertThat(claim).as("key %d", i).isInstanceOf(ClaimResult.Acquired.class);
		}
	}

	/**
	 * How much time passes between two claims of a tight loop: none for a store on the
	 * real clock, a positive step for one on a test clock.
	 * @return the step
	 */
	protected Duration tick() {
		return Duration.ZERO;
	}

	/**
	 * A store that tells how long a found record has left (a local replay cache keeps a
	 * copy no longer) never tells more than it was stored for, nor a non-positive time.
	 */
	@Test
	void aCompletedClaimNeverReportsMoreTimeToLiveThanTheRecordHas() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(this.store.complete(lease, record("timed"), TTL)).isTrue();
		ClaimResult.Completed completed = (ClaimResult.Completed) this.store.claim(key, LOCK_TTL);
		if (completed.remainingTtl() != null) {
			assertThat(completed.remainingTtl()).isPositive().isLessThanOrEqualTo(TTL);
		}
	}

	@Test
	void keysAreIndependent() {
		String a = newKey();
		String b = newKey();
		Lease leaseA = acquire(a);
		Lease leaseB = acquire(b);
		assertThat(this.store.complete(leaseA, record("a"), TTL)).isTrue();
		assertThat(this.store.claim(b, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.store.release(leaseB)).isTrue();
		assertThat(((ClaimResult.Completed) this.store.claim(a, LOCK_TTL)).record()).isEqualTo(record("a"));
		acquire(b);
	}

	@Test
	void manyThreadsRacingForOneKeyRunExactlyOnce() throws Exception {
		int threads = 16;
		int rounds = 20;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			for (int round = 0; round < rounds; round++) {
				String key = newKey();
				AtomicInteger executions = new AtomicInteger();
				CountDownLatch start = new CountDownLatch(1);
				List<Future<ClaimResult>> results = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					results.add(executor.submit(() -> {
						start.await();
						ClaimResult claim = this.store.claim(key, LOCK_TTL);
						if (claim instanceof ClaimResult.Acquired acquired) {
							executions.incrementAndGet();
							assertThat(this.store.complete(acquired.lease(), record("winner"), TTL)).isTrue();
						}
						return claim;
					}));
				}
				start.countDown();
				for (Future<ClaimResult> result : results) {
					ClaimResult claim = result.get(30, TimeUnit.SECONDS);
					if (claim instanceof ClaimResult.Completed completed) {
						assertThat(completed.record()).isEqualTo(record("winner"));
					}
				}
				assertThat(executions).as("executions in round %d", round).hasValue(1);
				assertThat(this.store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void fuzzedClaimsNeverShareAKey() throws Exception {
		int threads = 8;
		int operations = 150;
		List<String> keys = List.of(newKey(), newKey(), newKey());
		ConcurrentHashMap<String, AtomicInteger> holders = new ConcurrentHashMap<>();
		keys.forEach((key) -> holders.put(key, new AtomicInteger()));
		AtomicInteger acquisitions = new AtomicInteger();
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int seed = t;
				futures.add(executor.submit(() -> {
					Random random = new Random(seed);
					start.await();
					for (int i = 0; i < operations; i++) {
						String key = keys.get(random.nextInt(keys.size()));
						ClaimResult claim = this.store.claim(key, LOCK_TTL);
						if (claim instanceof ClaimResult.Acquired acquired) {
							acquisitions.incrementAndGet();
							int concurrent = holders.get(key).incrementAndGet();
							if (concurrent != 1) {
								fail("%d holders of one key", concurrent);
							}
							holders.get(key).decrementAndGet();
							// mostly release so that keys stay contended; sometimes
							// complete
							if (random.nextInt(10) == 0) {
								this.store.complete(acquired.lease(), record("fuzz"), Duration.ofMillis(200));
							}
							else {
								assertThat(this.store.release(acquired.lease())).isTrue();
							}
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(acquisitions.get()).isGreaterThan(keys.size());
	}

	@Test
	void inspectTellsAbsentInFlightAndCompleted() {
		String key = newKey();
		assertThat(store().inspect(key).isAbsent()).isTrue();
		Lease lease = acquire(key);
		RecordState inFlight = store().inspect(key);
		assertThat(inFlight.inFlight()).isTrue();
		assertThat(inFlight.record()).isNull();
		StoredRecord record = record("inspected");
		assertThat(store().complete(lease, record, TTL)).isTrue();
		RecordState completed = store().inspect(key);
		assertThat(completed.inFlight()).isFalse();
		assertThat(completed.record()).isEqualTo(record);
		assertThat(completed.expiresAt()).isNotNull();
	}

	@Test
	void evictRemovesTheRecordSoTheKeyRunsAgain() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(store().evict(key)).as("nothing to evict while in flight").isFalse();
		assertThat(store().complete(lease, record("evicted"), TTL)).isTrue();
		assertThat(store().evict(key)).isTrue();
		assertThat(store().inspect(key).isAbsent()).isTrue();
		assertThat(store().claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store().evict(newKey())).isFalse();
	}

	/**
	 * Claims {@code key} until it is acquired: after a broken lease or an expired record
	 * the store may take a moment (a server-side TTL, a dead session noticed) to free it.
	 * @param key the key
	 * @return the new lease
	 */
	protected Lease awaitAcquired(String key) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		ClaimResult claim;
		do {
			claim = this.store.claim(key, LOCK_TTL);
			if (claim instanceof ClaimResult.Acquired acquired) {
				return acquired.lease();
			}
			Thread.onSpinWait();
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
		while (System.nanoTime() < deadline);
		return fail("key was not freed in time; last claim: %s", claim);
	}

}
