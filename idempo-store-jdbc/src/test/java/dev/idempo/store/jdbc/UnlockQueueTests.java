package dev.idempo.store.jdbc;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.idempo.store.jdbc.KeyGuard.Holder;
import dev.idempo.store.jdbc.KeyGuard.State;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link UnlockQueue}: what a session's next batch takes, and what is
 * forgotten.
 *
 * @author idempo
 */
class UnlockQueueTests {

	private static final long GENERATION = 7;

	private final KeyGuard guard = new KeyGuard();

	private final UnlockQueue queue = new UnlockQueue();

	private Holder unlocking(String key, long generation, Object lock) {
		Holder holder = this.guard.enter(key, "token-" + key, System.nanoTime(), (h) -> true);
		assertThat(holder).isNotNull();
		this.guard.sent(holder, 0, generation, lock);
		this.guard.unlocking(holder);
		this.queue.add(holder);
		return holder;
	}

	@Test
	void takesTheUnlocksOfTheOpenConnectionOldestFirstAndForgetsThoseOfAGoneOne() {
		Holder first = unlocking("a", GENERATION, 1);
		Holder stale = unlocking("b", GENERATION - 1, 2);
		Holder second = unlocking("c", GENERATION, 3);
		assertThat(this.queue.take(GENERATION, this.guard, 10)).containsExactly(first, second);
		assertThat(stale.state()).isEqualTo(State.GONE);
		assertThat(this.guard.get("b")).isNull();
		assertThat(this.guard.get("a")).isSameAs(first);
		assertThat(this.queue.isEmpty()).isTrue();
	}

	@Test
	void takesAtMostTheBatchsShare() {
		unlocking("a", GENERATION, 1);
		unlocking("b", GENERATION, 2);
		assertThat(this.queue.take(GENERATION, this.guard, 1)).hasSize(1);
		assertThat(this.queue.isEmpty()).isFalse();
	}

	@Test
	void aLockSharedWithAnotherClaimOnTheSessionTakesNothingAndAsksToEndTheSession() {
		Holder queued = unlocking("a", GENERATION, 42);
		Holder other = this.guard.enter("b", "token-b", System.nanoTime(), (h) -> true);
		this.guard.sent(other, 0, GENERATION, 42);
		assertThat(this.queue.take(GENERATION, this.guard, 10)).isNull();
		assertThat(this.queue.contains(queued)).isTrue();
		assertThat(queued.state()).isNotEqualTo(State.GONE);
	}

	@Test
	void unlocksThatRanFreeTheirKeys() {
		Holder holder = unlocking("a", GENERATION, 1);
		List<Holder> taken = this.queue.take(GENERATION, this.guard, 10);
		this.queue.ran(taken, this.guard);
		assertThat(holder.state()).isEqualTo(State.GONE);
		assertThat(this.guard.get("a")).isNull();
	}

	@Test
	void failedUnlocksGoBackToTheFrontAndTheThirdFailureInARowEndsTheSession() {
		Holder first = unlocking("a", GENERATION, 1);
		Holder later = unlocking("b", GENERATION, 2);
		List<Holder> taken = this.queue.take(GENERATION, this.guard, 1);
		assertThat(this.queue.failed(taken)).isFalse();
		assertThat(this.queue.isDrainDue()).isFalse();
		assertThat(this.queue.take(GENERATION, this.guard, 10)).containsExactly(first, later);
		assertThat(this.queue.failed(List.of(first, later))).isFalse();
		assertThat(this.queue.failed(List.of())).isTrue();
	}

	@Test
	void clearingForgetsEveryQueuedUnlock() {
		Holder holder = unlocking("a", GENERATION, 1);
		this.queue.clear(this.guard);
		assertThat(this.queue.isEmpty()).isTrue();
		assertThat(holder.state()).isEqualTo(State.GONE);
	}

	@Test
	void oneDrainIsScheduledAtATime() {
		assertThat(this.queue.scheduleDrain()).isTrue();
		assertThat(this.queue.scheduleDrain()).isFalse();
		this.queue.drainStarted();
		assertThat(this.queue.scheduleDrain()).isTrue();
	}

}
