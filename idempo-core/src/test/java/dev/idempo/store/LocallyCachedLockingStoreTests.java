package dev.idempo.store;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.testsupport.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LocallyCachedLockingStore} in front of a real in-memory store that shares the
 * test's clock. Evicting a record in the shared store behind the cache's back shows which
 * answers came from the local copy: the store would answer with a fresh claim.
 *
 * @author idempo
 */
class LocallyCachedLockingStoreTests {

	private static final Duration LOCK_TTL = Duration.ofSeconds(30);

	private final MutableClock clock = new MutableClock();

	private final InMemoryLockingStore shared = new InMemoryLockingStore(this.clock, 100, 1 << 20);

	private final LocallyCachedLockingStore cache = new LocallyCachedLockingStore(this.shared, 10,
			Duration.ofSeconds(60), this.clock);

	private final StoredRecord record = new StoredRecord("f1", "response".getBytes(StandardCharsets.UTF_8));

	@Test
	void aRecordThisInstanceStoredIsReplayedWithoutTheStore() {
		completeThroughCache("a1", Duration.ofMinutes(10));
		this.shared.evict("a1");
		ClaimResult replay = this.cache.claim("a1", LOCK_TTL);
		assertThat(replay).isInstanceOfSatisfying(ClaimResult.Completed.class,
				(completed) -> assertThat(completed.record()).isEqualTo(this.record));
		assertThat(this.cache.hits()).isEqualTo(1);
	}

	@Test
	void aRecordReplayedFromTheStoreIsKeptForItsRemainingTimeToLive() {
		Lease lease = ((ClaimResult.Acquired) this.shared.claim("b1", LOCK_TTL)).lease();
		this.shared.complete(lease, this.record, Duration.ofSeconds(20));
		this.clock.advance(Duration.ofSeconds(15));
		assertThat(this.cache.claim("b1", LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
		assertThat(this.cache.misses()).isEqualTo(1);
		this.shared.evict("b1");
		assertThat(this.cache.claim("b1", LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
		assertThat(this.cache.hits()).isEqualTo(1);
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(this.cache.claim("b1", LOCK_TTL)).as("the record's 20 s are up")
			.isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aCopyLivesNoLongerThanTheRecord() {
		completeThroughCache("c1", Duration.ofSeconds(10));
		this.clock.advance(Duration.ofMillis(9_999));
		this.shared.evict("c1");
		assertThat(this.cache.claim("c1", LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
		completeThroughCache("c2", Duration.ofSeconds(10));
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(this.cache.claim("c2", LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aCopyLivesNoLongerThanMaxAge() {
		completeThroughCache("d1", Duration.ofHours(1));
		this.shared.evict("d1");
		this.clock.advance(Duration.ofSeconds(59));
		assertThat(this.cache.claim("d1", LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.cache.claim("d1", LOCK_TTL)).as("60 s max-age").isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void claimsOfFreeAndInProgressKeysAlwaysGoToTheStore() {
		assertThat(this.cache.claim("e1", LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(this.cache.claim("e1", LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.cache.claim("e1", LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.cache.misses()).isEqualTo(3);
		assertThat(this.cache.hits()).isZero();
		assertThat(this.cache.size()).isZero();
	}

	@Test
	void aReleasedClaimLeavesNothingToReplay() {
		Lease lease = ((ClaimResult.Acquired) this.cache.claim("f1", LOCK_TTL)).lease();
		this.cache.release(lease);
		assertThat(this.cache.claim("f1", LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void evictingThroughTheCacheDropsTheCopyAndTheRecord() {
		completeThroughCache("g1", Duration.ofMinutes(10));
		assertThat(this.cache.evict("g1")).isTrue();
		assertThat(this.cache.claim("g1", LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aRecordWhoseRemainingTimeTheStoreDoesNotTellIsNotKept() {
		LocallyCachedLockingStore overSilentStore = new LocallyCachedLockingStore(new SilentTtlStore(this.shared), 10,
				Duration.ofSeconds(60), this.clock);
		Lease lease = ((ClaimResult.Acquired) this.shared.claim("h1", LOCK_TTL)).lease();
		this.shared.complete(lease, this.record, Duration.ofMinutes(10));
		assertThat(overSilentStore.claim("h1", LOCK_TTL)).isInstanceOf(ClaimResult.Completed.class);
		this.shared.evict("h1");
		assertThat(overSilentStore.claim("h1", LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void nonPositiveBoundsAreRefused() {
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> new LocallyCachedLockingStore(this.shared, 0, Duration.ofSeconds(1), this.clock));
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> new LocallyCachedLockingStore(this.shared, 1, Duration.ZERO, this.clock));
	}

	private void completeThroughCache(String key, Duration ttl) {
		Lease lease = ((ClaimResult.Acquired) this.cache.claim(key, LOCK_TTL)).lease();
		assertThat(this.cache.complete(lease, this.record, ttl)).isTrue();
	}

	/** The real store, answering replays as a store that does not report time to live. */
	private record SilentTtlStore(InMemoryLockingStore store) implements dev.idempo.store.LockingStore {

		@Override
		public ClaimResult claim(String key, Duration lockTtl) {
			ClaimResult result = this.store.claim(key, lockTtl);
			return (result instanceof ClaimResult.Completed completed) ? new ClaimResult.Completed(completed.record())
					: result;
		}

		@Override
		public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
			return this.store.complete(lease, record, ttl);
		}

		@Override
		public boolean release(Lease lease) {
			return this.store.release(lease);
		}

	}

}
