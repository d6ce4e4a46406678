package dev.idempo.flow;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.idempo.core.IdempotencySettings;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.testsupport.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link PlainClaimMode} on the real memory store.
 *
 * @author idempo
 */
class PlainClaimModeTests {

	private static final Duration TTL = Duration.ofMinutes(5);

	private final MutableClock clock = new MutableClock();

	private final InMemoryLockingStore store = new InMemoryLockingStore(this.clock, 100, 1024 * 1024);

	private final LeaseRenewer leaseRenewer = new LeaseRenewer();

	@AfterEach
	void stop() {
		this.leaseRenewer.destroy();
	}

	private PlainClaimMode mode(boolean failOpen) {
		IdempotencySettings defaults = IdempotencySettings.defaults();
		IdempotencySettings settings = new IdempotencySettings(defaults.keyHeader(), List.of(), false,
				defaults.responseTtl(), defaults.lockTtl(), defaults.maxResponseSize(), defaults.maxRequestSize(),
				Set.of(), defaults.conflictRetryAfter(), Duration.ZERO, failOpen, defaults.storeFailureRetryAfter());
		return new PlainClaimMode(this.store, settings, this.leaseRenewer);
	}

	@Test
	void claimHoldsCompletesAndReplays() {
		PlainClaimMode mode = mode(false);
		ClaimMode.Claim<PlainClaimMode.PlainHold> first = mode.claim("k", Duration.ZERO);
		assertThat(first).isInstanceOf(ClaimMode.Held.class);
		assertThat(mode.claim("k", Duration.ZERO)).isInstanceOf(ClaimMode.InProgress.class);
		ClaimMode.Hold hold = ((ClaimMode.Held<PlainClaimMode.PlainHold>) first).hold();
		assertThat(hold.commitsWithWork()).isFalse();
		hold.workEnded();
		assertThat(hold.isLost()).isFalse();
		assertThat(hold.complete(new StoredRecord("fp", new byte[] { 1, 2 }), TTL)).isTrue();
		ClaimMode.Claim<PlainClaimMode.PlainHold> again = mode.claim("k", Duration.ZERO);
		assertThat(again).isInstanceOf(ClaimMode.Replay.class);
		StoredRecord record = ((ClaimMode.Replay<PlainClaimMode.PlainHold>) again).record();
		assertThat(record.fingerprint()).isEqualTo("fp");
		assertThat(record.response()).containsExactly(1, 2);
	}

	@Test
	void releaseFreesTheKey() {
		PlainClaimMode mode = mode(false);
		ClaimMode.Hold hold = ((ClaimMode.Held<PlainClaimMode.PlainHold>) mode.claim("k", Duration.ZERO)).hold();
		hold.workEnded();
		assertThat(hold.release(new IllegalStateException("work failed"))).isTrue();
		assertThat(mode.claim("k", Duration.ZERO)).isInstanceOf(ClaimMode.Held.class);
	}

	@Test
	void aClaimThatLostTheKeyNeitherStoresNorReleasesAnotherOwnersClaim() {
		PlainClaimMode mode = mode(false);
		ClaimMode.Hold late = ((ClaimMode.Held<PlainClaimMode.PlainHold>) mode.claim("k", Duration.ZERO)).hold();
		late.workEnded();
		// the late claim's lease lapses (the memory store's leases expire) and another
		// request takes the key
		this.clock.advance(IdempotencySettings.defaults().lockTtl().plusSeconds(1));
		ClaimResult owner = this.store.claim("k", Duration.ofMinutes(1));
		assertThat(owner).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(late.complete(new StoredRecord("fp", new byte[] { 1 }), TTL)).isFalse();
		assertThat(late.release(null)).isFalse();
		assertThat(this.store.claim("k", Duration.ofMinutes(1))).isInstanceOf(ClaimResult.InProgress.class);
	}

	@Test
	void waitsForTheHolderUpToTheWait() {
		PlainClaimMode mode = mode(false);
		ClaimMode.Hold hold = ((ClaimMode.Held<PlainClaimMode.PlainHold>) mode.claim("k", Duration.ZERO)).hold();
		Thread finisher = new Thread(() -> {
			hold.workEnded();
			hold.complete(new StoredRecord("fp", new byte[] { 7 }), TTL);
		});
		finisher.start();
		assertThat(mode.claim("k", Duration.ofSeconds(10))).isInstanceOf(ClaimMode.Replay.class);
	}

	@Test
	void failsOpenOnlyWhereConfigured() {
		assertThat(mode(true).failsOpen()).isTrue();
		assertThat(mode(false).failsOpen()).isFalse();
		assertThat(mode(false).isStoreFailure(new IllegalStateException())).isTrue();
	}

}
