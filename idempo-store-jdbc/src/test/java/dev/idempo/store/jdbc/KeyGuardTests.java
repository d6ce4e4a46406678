package dev.idempo.store.jdbc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.idempo.store.Lease;
import dev.idempo.store.jdbc.KeyGuard.Holder;
import dev.idempo.store.jdbc.KeyGuard.State;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link KeyGuard}: one claim per key in this JVM, and the life of its holder.
 *
 * @author idempo
 */
class KeyGuardTests {

	private final KeyGuard guard = new KeyGuard();

	private static long in(long millis) {
		return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
	}

	private Holder held(String key, long generation) {
		Holder holder = this.guard.enter(key, "token-" + key, in(0), (h) -> true);
		assertThat(holder).isNotNull();
		this.guard.sent(holder, 0, generation, key.hashCode());
		this.guard.held(holder);
		return holder;
	}

	@Test
	void aHolderGoesFromClaimingToHeldToFinishingToGoneAndGoneIsFinal() {
		Holder holder = this.guard.enter("k", "t", in(0), (h) -> true);
		assertThat(holder.state()).isEqualTo(State.CLAIMING);
		assertThat(holder.session()).isEqualTo(-1);
		this.guard.sent(holder, 2, 9, "lock");
		assertThat(holder.isOn(2, 9)).isTrue();
		assertThat(holder.lock()).isEqualTo("lock");
		this.guard.held(holder);
		assertThat(this.guard.finishing(new Lease("k", "other"))).isNull();
		assertThat(this.guard.finishing(new Lease("k", "t"))).isSameAs(holder);
		assertThat(holder.state()).isEqualTo(State.FINISHING);
		assertThat(this.guard.finishing(new Lease("k", "t"))).isNull();
		this.guard.forget(holder);
		assertThat(this.guard.get("k")).isNull();
		this.guard.unlocking(holder);
		this.guard.held(holder);
		assertThat(holder.state()).isEqualTo(State.GONE);
	}

	@Test
	void aSecondClaimOfAHeldKeyIsRefusedWhileItsSessionLives() {
		held("k", 1);
		assertThat(this.guard.enter("k", "again", in(1000), (h) -> true)).isNull();
	}

	@Test
	void aSecondClaimForgetsAnOwnerWhoseSessionDied() {
		Holder owner = held("k", 1);
		Holder next = this.guard.enter("k", "again", in(1000), (h) -> false);
		assertThat(next).isNotNull();
		assertThat(owner.state()).isEqualTo(State.GONE);
		assertThat(this.guard.get("k")).isSameAs(next);
	}

	@Test
	void aSecondClaimWaitsForTheFirstClaimsRoundTripAndGetsInWhenItEnds() throws Exception {
		Holder first = this.guard.enter("k", "first", in(0), (h) -> true);
		CompletableFuture<Holder> second = CompletableFuture
			.supplyAsync(() -> this.guard.enter("k", "second", in(5000), (h) -> true));
		await().during(200, TimeUnit.MILLISECONDS).atMost(1, TimeUnit.SECONDS).until(() -> !second.isDone());
		// the first claim found the key completed: it leaves without a lock
		this.guard.forget(first);
		Holder entered = second.get(5, TimeUnit.SECONDS);
		assertThat(entered).isNotNull();
		assertThat(entered.token).isEqualTo("second");
	}

	@Test
	void aSecondClaimGivesUpAtItsDeadlineWhileTheFirstRoundTripRuns() {
		this.guard.enter("k", "first", in(0), (h) -> true);
		long start = System.nanoTime();
		assertThat(this.guard.enter("k", "second", in(150), (h) -> true)).isNull();
		assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
	}

	@Test
	void countsTheClaimsHeldOnOneConnectionAndSeesSharedLocks() {
		Holder a = held("a", 1);
		held("b", 1);
		held("c", 2);
		assertThat(this.guard.heldOn(0, 1)).isEqualTo(2);
		assertThat(this.guard.sharesLock(a)).isFalse();
		Holder colliding = this.guard.enter("d", "token-d", in(0), (h) -> true);
		this.guard.sent(colliding, 0, 1, a.lock());
		assertThat(this.guard.sharesLock(a)).isTrue();
		this.guard.forget(colliding);
		assertThat(this.guard.sharesLock(a)).isFalse();
	}

}
