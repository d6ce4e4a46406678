package dev.idempo.flow;

import java.lang.reflect.Field;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.flow.ClaimMode.Held;
import dev.idempo.flow.ReactiveClaimMode.ReactiveHold;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.Lease;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review of issue 29: the reactive hold on the real memory store and the real renewer,
 * under races between its ends and between its start and its end.
 */
class ReactiveClaimModeTests {

	private final LeaseRenewer renewer = new LeaseRenewer();

	private final InMemoryLockingStore memory = new InMemoryLockingStore(Clock.systemUTC(), 100_000, 64 * 1024 * 1024);

	private final List<String> responses = new CopyOnWriteArrayList<>();

	private final IdempotencyListener listener = new IdempotencyListener() {
		@Override
		public void onResponse(Source source, ResponseOutcome outcome, NotStoredReason reason) {
			ReactiveClaimModeTests.this.responses.add(outcome + "/" + reason);
		}
	};

	private final ExecutorService threads = Executors.newFixedThreadPool(2);

	@AfterEach
	void stop() {
		this.threads.shutdownNow();
		this.renewer.destroy();
	}

	private static IdempotencySettings settings(Duration lockTtl) {
		IdempotencySettings d = IdempotencySettings.defaults();
		return new IdempotencySettings(d.keyHeader(), d.keyHeaderAliases(), d.keyRequired(), d.responseTtl(), lockTtl,
				d.maxResponseSize(), d.maxRequestSize(), d.excludedHeaders(), d.conflictRetryAfter(),
				d.conflictWaitTimeout(), d.failOpen(), d.storeFailureRetryAfter(), d.replayedHeader());
	}

	private static ReactiveHold held(ReactiveClaimMode mode, String key) {
		return ((Held<ReactiveHold>) mode.claim(key, Duration.ZERO).block()).hold();
	}

	@SuppressWarnings("unchecked")
	private Set<Object> activeRenewals() throws Exception {
		Field active = LeaseRenewer.class.getDeclaredField("active");
		active.setAccessible(true);
		return (Set<Object>) active.get(this.renewer);
	}

	/**
	 * Store racing a cancel-release: one end, counted once, and the key ends accordingly.
	 */
	@Test
	void storeRacingReleaseEndsExactlyOnce() throws Exception {
		ReactiveClaimMode mode = new ReactiveClaimMode(new InlineLockingStore(this.memory),
				settings(Duration.ofSeconds(30)), this.renewer, this.listener);
		CyclicBarrier barrier = new CyclicBarrier(2);
		for (int i = 0; i < 500; i++) {
			String key = "race-" + i + "-" + System.nanoTime();
			ReactiveHold hold = held(mode, key);
			hold.workStarted();
			this.responses.clear();
			CompletableFuture<Void> store = CompletableFuture.runAsync(() -> {
				await(barrier);
				hold.store(Source.WEB, new StoredRecord("fp", new byte[] { 1 }), Duration.ofMinutes(1), "x").block();
			}, this.threads);
			CompletableFuture<Void> release = CompletableFuture.runAsync(() -> {
				await(barrier);
				hold.release(Source.WEB, NotStoredReason.CANCELLED).subscribe();
			}, this.threads);
			store.get(10, TimeUnit.SECONDS);
			release.get(10, TimeUnit.SECONDS);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
			while (this.responses.isEmpty() && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			Thread.sleep(1);
			assertThat(this.responses).hasSize(1);
			ClaimResult after = this.memory.claim(key, Duration.ofSeconds(30));
			if (this.responses.get(0).startsWith("STORED")) {
				assertThat(after).isInstanceOf(ClaimResult.Completed.class);
			}
			else {
				assertThat(after).isInstanceOf(ClaimResult.Acquired.class);
			}
		}
		assertThat(activeRenewals()).isEmpty();
	}

	/**
	 * workStarted racing the end of the hold (check-then-act on {@code renewal} and
	 * {@code ended}): a renewal registered after endOnce read {@code renewal} is never
	 * stopped by the hold.
	 */
	@Test
	void workStartedRacingReleaseNeverLeavesARenewalBehind() throws Exception {
		ReactiveClaimMode mode = new ReactiveClaimMode(new InlineLockingStore(this.memory),
				settings(Duration.ofSeconds(30)), this.renewer, this.listener);
		CyclicBarrier barrier = new CyclicBarrier(2);
		int leaked = 0;
		for (int i = 0; i < 20_000 && leaked == 0; i++) {
			ReactiveHold hold = held(mode, "start-" + i + "-" + System.nanoTime());
			CompletableFuture<Void> start = CompletableFuture.runAsync(() -> {
				await(barrier);
				hold.workStarted();
			}, this.threads);
			CompletableFuture<Void> end = CompletableFuture.runAsync(() -> {
				await(barrier);
				hold.release(Source.WEB, NotStoredReason.CANCELLED).block();
			}, this.threads);
			start.get(10, TimeUnit.SECONDS);
			end.get(10, TimeUnit.SECONDS);
			leaked = activeRenewals().size();
		}
		assertThat(leaked).as("renewals left running after their hold ended").isZero();
	}

	/**
	 * A renewal Mono that never answers: the lease is lost one lock TTL after the work
	 * started (the unanswered renewal times out and is tried again, never answering
	 * either), and the response is not stored.
	 */
	@Test
	void renewalThatNeverAnswersLosesTheLease() throws Exception {
		AtomicInteger renewals = new AtomicInteger();
		ReactiveLockingStore hanging = new ReactiveLockingStore() {
			final InlineLockingStore delegate = new InlineLockingStore(ReactiveClaimModeTests.this.memory);

			@Override
			public Mono<ClaimResult> claim(String key, Duration lockTtl) {
				return this.delegate.claim(key, lockTtl);
			}

			@Override
			public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
				return this.delegate.complete(lease, record, ttl);
			}

			@Override
			public Mono<Boolean> release(Lease lease) {
				return this.delegate.release(lease);
			}

			@Override
			public Mono<Boolean> renew(Lease lease, Duration lockTtl) {
				renewals.incrementAndGet();
				return Mono.never();
			}

			@Override
			public boolean leaseExpires() {
				return true;
			}
		};
		ReactiveClaimMode mode = new ReactiveClaimMode(hanging, settings(Duration.ofMillis(300)), this.renewer,
				this.listener);
		ReactiveHold hold = held(mode, "hang-" + System.nanoTime());
		long started = System.nanoTime();
		hold.workStarted();
		org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(hold::isLost);
		assertThat(System.nanoTime() - started).as("lost no sooner than a lock TTL after the work started")
			.isGreaterThanOrEqualTo(Duration.ofMillis(300).toNanos());
		assertThat(renewals.get()).isPositive();
		hold.store(Source.WEB, new StoredRecord("fp", new byte[] { 1 }), Duration.ofMinutes(1), "x").block();
		assertThat(this.responses).containsExactly("LOCK_LOST/NONE");
	}

	private static void await(CyclicBarrier barrier) {
		try {
			barrier.await(10, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
