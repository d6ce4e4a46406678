package dev.idempo.store.jdbc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.KeyGuard.Holder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link Operation}: its compare-and-set life and the hand-over of its outcome.
 *
 * @author idempo
 */
class OperationTests {

	private final Holder holder = new Holder("key", "token");

	@Test
	void aQueuedOperationIsEitherStartedOrCancelledNeverBoth() {
		Operation started = Operation.claim(this.holder, System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
		assertThat(started.isQueued()).isTrue();
		assertThat(started.start()).isTrue();
		assertThat(started.cancel()).isFalse();
		assertThat(started.start()).isFalse();
		Operation cancelled = Operation.release(this.holder);
		assertThat(cancelled.cancel()).isTrue();
		assertThat(cancelled.start()).isFalse();
		assertThat(cancelled.isQueued()).isFalse();
		assertThat(cancelled.isDone()).isFalse();
	}

	@Test
	void onlyARunningOperationEndsAndItsOutcomeIsReadAfterDone() {
		StoredRecord record = new StoredRecord("fp", new byte[] { 1 });
		Operation claim = Operation.claim(this.holder, System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
		assertThatIllegalStateException().isThrownBy(() -> claim.succeed(true, null));
		claim.start();
		claim.succeed(false, record);
		assertThat(claim.isDone()).isTrue();
		assertThat(claim.succeeded()).isFalse();
		assertThat(claim.found()).isSameAs(record);
		assertThat(claim.failure()).isNull();
		assertThatIllegalStateException().isThrownBy(() -> claim.fail(new RuntimeException()));
	}

	@Test
	void aRunningClaimGoesBackToTheQueueOnceCounted() {
		Operation claim = Operation.claim(this.holder, System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
		assertThatIllegalStateException().isThrownBy(claim::requeue);
		claim.start();
		claim.requeue();
		assertThat(claim.isQueued()).isTrue();
		assertThat(claim.retries()).isEqualTo(1);
		assertThat(claim.start()).isTrue();
	}

	@Test
	void aClaimIsAwaitedUntilItsDeadlineACompleteAlways() {
		assertThat(Operation.claim(this.holder, System.nanoTime() - 1).isAwaited()).isFalse();
		assertThat(Operation.claim(this.holder, System.nanoTime() + TimeUnit.SECONDS.toNanos(5)).isAwaited()).isTrue();
		assertThat(Operation.complete(this.holder, new StoredRecord("fp", new byte[0]), 1).isAwaited()).isTrue();
	}

	@Test
	void endingAnOperationWakesTheThreadThatMadeIt() throws Exception {
		CompletableFuture<Operation> made = new CompletableFuture<>();
		CompletableFuture<Boolean> outcome = CompletableFuture.supplyAsync(() -> {
			Operation release = Operation.release(this.holder);
			made.complete(release);
			while (!release.isDone()) {
				LockSupport.park(this);
			}
			return release.succeeded();
		});
		Operation release = made.get(5, TimeUnit.SECONDS);
		assertThat(release.start()).isTrue();
		release.succeed(true, null);
		assertThat(outcome.get(5, TimeUnit.SECONDS)).isTrue();
	}

}
