package dev.idempo.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.blockhound.BlockingOperationError;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The behaviour every {@link ReactiveLockingStore} must have: every case of
 * {@link LockingStoreContractTest}, run through the reactive store, plus what only a
 * reactive store can get wrong (cancelled claims, claims racing on Reactor's own
 * threads).
 * <p>
 * The store under test ({@link #store()}) is a blocking view of the reactive one: each
 * call subscribes to the reactive operation on {@link Schedulers#parallel()}, a
 * non-blocking scheduler, and only the test's own thread waits for the answer. With
 * BlockHound installed (the module registers {@code BlockHoundExtension}, see
 * {@link #blockHoundIsInstalled()}), any blocking call the reactive store makes on the
 * subscriber's thread, or on the thread that completes it, fails the test. What a
 * reactive store does not have ({@code inspect}, {@code evict}) the view takes from the
 * blocking store over the same records that a subclass supplies.
 *
 * @author idempo
 */
public abstract class ReactiveLockingStoreContractTest extends LockingStoreContractTest {

	/** How long the blocking view waits for one reactive operation. */
	protected static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(30);

	private @Nullable LockingStore blockingStore;

	private @Nullable ReactiveLockingStore reactiveStore;

	/**
	 * Creates a blocking store over the records the reactive store works on; called
	 * before every test. The contract's {@code inspect} and {@code evict} cases and the
	 * subclass's {@link #breakLease} use it.
	 * @return the blocking store
	 */
	protected abstract LockingStore createBlockingStore();

	/**
	 * Creates the reactive store under test, over the same records as
	 * {@code blockingStore}; called before every test.
	 * @param blockingStore the store that {@link #createBlockingStore()} made
	 * @return the reactive store
	 */
	protected abstract ReactiveLockingStore createReactiveStore(LockingStore blockingStore);

	/**
	 * A reactive store over the same records whose claims reach the store at once but
	 * whose answers are held back until {@link HeldAnswers#letThrough()}: how a claim is
	 * cancelled after it took the key and before its subscriber learnt so. {@code null}
	 * for a store whose claims answer on the subscriber's thread as they run (they cannot
	 * be held without blocking it).
	 * @return the held store, or {@code null}
	 */
	protected @Nullable HeldAnswers holdAnswers() {
		return null;
	}

	@Override
	protected final LockingStore createStore() {
		this.blockingStore = createBlockingStore();
		this.reactiveStore = createReactiveStore(this.blockingStore);
		return new SubscribedOnParallel(this.reactiveStore, this.blockingStore);
	}

	@Override
	protected void destroyStore(LockingStore store) {
		destroyBlockingStore(blockingStore());
	}

	/**
	 * Called after every test with the store {@link #createBlockingStore()} made.
	 * @param store the blocking store
	 */
	protected void destroyBlockingStore(LockingStore store) {
	}

	/**
	 * The blocking store over the records of the store under test.
	 * @return the blocking store
	 */
	protected LockingStore blockingStore() {
		assertThat(this.blockingStore).as("blocking store").isNotNull();
		return this.blockingStore;
	}

	/**
	 * The reactive store under test.
	 * @return the reactive store
	 */
	protected ReactiveLockingStore reactiveStore() {
		assertThat(this.reactiveStore).as("reactive store").isNotNull();
		return this.reactiveStore;
	}

	/**
	 * Waits, from the test's thread, for {@code operation} subscribed on
	 * {@link Schedulers#parallel()}.
	 * @param <T> the answer's type
	 * @param operation the reactive operation
	 * @return its answer
	 */
	protected static <T> T await(Mono<T> operation) {
		T answer = operation.subscribeOn(Schedulers.parallel()).block(OPERATION_TIMEOUT);
		assertThat(answer).as("answer").isNotNull();
		return answer;
	}

	@Test
	void blockHoundIsInstalled() {
		Mono<Integer> sleeping = Mono.fromCallable(() -> {
			Thread.sleep(1);
			return 1;
		});
		Throwable failure = sleeping.subscribeOn(Schedulers.parallel())
			.then(Mono.<Throwable>empty())
			.onErrorResume(Mono::just)
			.block(OPERATION_TIMEOUT);
		assertThat(failure).isInstanceOf(BlockingOperationError.class).hasMessageContaining("Thread.sleep");
	}

	@Test
	void fiftyClaimsOfOneKeyOnReactorThreadsAcquireItOnce() {
		for (int round = 0; round < 5; round++) {
			String key = newKey();
			List<ClaimResult> claims = Flux.range(0, 50)
				.flatMap((i) -> reactiveStore().claim(key, LOCK_TTL).subscribeOn(Schedulers.parallel()), 50)
				.collectList()
				.block(OPERATION_TIMEOUT);
			assertThat(claims).hasSize(50);
			List<ClaimResult> acquired = claims.stream().filter(ClaimResult.Acquired.class::isInstance).toList();
			assertThat(acquired).as("acquired in round %d", round).hasSize(1);
			assertThat(claims).filteredOn(ClaimResult.InProgress.class::isInstance).hasSize(49);
			Lease lease = ((ClaimResult.Acquired) acquired.get(0)).lease();
			assertThat(await(reactiveStore().complete(lease, record("once"), TTL))).isTrue();
			assertThat(await(reactiveStore().claim(key, LOCK_TTL))).isInstanceOf(ClaimResult.Completed.class);
		}
	}

	/**
	 * Claims cancelled at every moment of their life (before they start, while they run,
	 * as they answer) never leave their keys locked: each key is acquired again well
	 * within one lock TTL, once the claims that did answer their subscriber are released
	 * as their owners would.
	 */
	@Test
	void claimsCancelledAtAnyMomentNeverLeaveTheirKeysLocked() {
		List<String> keys = new ArrayList<>();
		List<AtomicReference<@Nullable ClaimResult>> answers = new ArrayList<>();
		// every sixth claim is cancelled before it can start, whatever the machine's
		// speed:
		// its scheduler is busy until the loop ends
		Scheduler held = Schedulers.fromExecutorService(Executors.newSingleThreadExecutor(), "held-claims");
		CountDownLatch loopEnded = new CountDownLatch(1);
		try {
			held.schedule(() -> awaitQuietly(loopEnded));
			for (int i = 0; i < 60; i++) {
				String key = newKey();
				AtomicReference<@Nullable ClaimResult> answer = new AtomicReference<>();
				keys.add(key);
				answers.add(answer);
				// what the store emitted is its subscriber's, even if a cancellation
				// racing
				// with it makes the end of the chain drop it (Reactor's onNextDropped)
				Disposable claim = reactiveStore().claim(key, LOCK_TTL)
					.doOnNext(answer::set)
					.subscribeOn((i % 6 == 0) ? held : Schedulers.parallel())
					.subscribe();
				spin(TimeUnit.MICROSECONDS.toNanos(i * 25L));
				claim.dispose();
			}
		}
		finally {
			loopEnded.countDown();
			held.dispose();
		}
		for (int i = 0; i < keys.size(); i++) {
			if (answers.get(i).get() instanceof ClaimResult.Acquired acquired) {
				assertThat(store().release(acquired.lease())).isTrue();
			}
			Lease lease;
			try {
				lease = awaitAcquired(keys.get(i));
			}
			catch (AssertionError ex) {
				throw new AssertionError("claim " + i + " of " + keys.size() + ", answered " + answers.get(i).get()
						+ ": " + ex.getMessage() + "; the store: " + blockingStore().inspect(keys.get(i)), ex);
			}
			assertThat(store().release(lease)).isTrue();
		}
		assertThat(answers).as("claims cancelled before they answered").anyMatch((answer) -> answer.get() == null);
	}

	/**
	 * A subscriber that requests only once the claim's answer has arrived receives it:
	 * the answer waits for the request, and is never replaced by an empty completion.
	 */
	@Test
	void aClaimRequestedOnlyAfterItsAnswerArrivedYieldsIt() throws Exception {
		String key = newKey();
		AtomicReference<@Nullable ClaimResult> answered = new AtomicReference<>();
		AtomicReference<@Nullable SignalType> ended = new AtomicReference<>();
		CountDownLatch terminated = new CountDownLatch(1);
		BaseSubscriber<ClaimResult> subscriber = new BaseSubscriber<>() {

			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				// requests later
			}

			@Override
			protected void hookOnNext(ClaimResult value) {
				answered.set(value);
			}

			@Override
			protected void hookFinally(SignalType type) {
				ended.set(type);
				terminated.countDown();
			}

		};
		reactiveStore().claim(key, LOCK_TTL).subscribe(subscriber);
		awaitState(key, RecordState::inFlight, "claimed in the store");
		// answered after the first claim's answer by a store that answers in order
		assertThat(await(reactiveStore().claim(key, LOCK_TTL))).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(ended).as("ended before any request").hasValue(null);
		subscriber.request(1);
		assertThat(terminated.await(OPERATION_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
		assertThat(ended).hasValue(SignalType.ON_COMPLETE);
		ClaimResult claim = answered.get();
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store().release(((ClaimResult.Acquired) claim).lease())).isTrue();
	}

	/**
	 * A claim that took the key in the store and whose subscriber cancelled before the
	 * answer arrived gives the key back: nobody else would ever complete or release it.
	 */
	@Test
	void aClaimCancelledAfterItTookTheKeyGivesItBack() throws Exception {
		HeldAnswers held = holdAnswers();
		if (held == null) {
			Assumptions.abort(reactiveStore().name() + ": no way to hold its answers back");
			return;
		}
		try (held) {
			String key = newKey();
			AtomicReference<@Nullable ClaimResult> answered = new AtomicReference<>();
			Disposable claim = held.store()
				.claim(key, LOCK_TTL)
				.subscribeOn(Schedulers.parallel())
				.subscribe(answered::set);
			awaitState(key, RecordState::inFlight, "claimed in the store");
			claim.dispose();
			held.letThrough();
			assertThat(store().release(awaitAcquired(key))).isTrue();
			assertThat(answered).as("the cancelled subscriber's answer").hasValue(null);
		}
	}

	/**
	 * Polls {@code inspect} until {@code condition} holds.
	 * @param key the key
	 * @param condition what the state must satisfy
	 * @param description what is awaited
	 */
	protected void awaitState(String key, Predicate<RecordState> condition, String description) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		while (!condition.test(blockingStore().inspect(key))) {
			if (System.nanoTime() > deadline) {
				fail("not %s in time", description);
			}
			pause();
		}
	}

	private static void pause() {
		try {
			Thread.sleep(5);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(1, TimeUnit.MINUTES);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static void spin(long nanos) {
		long end = System.nanoTime() + nanos;
		while (System.nanoTime() < end) {
			Thread.onSpinWait();
		}
	}

	/**
	 * A reactive store whose answers are held back, and how to let them through.
	 */
	protected interface HeldAnswers extends AutoCloseable {

		/**
		 * The store whose answers are held.
		 * @return the store
		 */
		ReactiveLockingStore store();

		/**
		 * Lets held and later answers through.
		 */
		void letThrough();

	}

	/**
	 * A {@link LockingStore} whose store operations subscribe to the reactive store's on
	 * {@link Schedulers#parallel()} and wait, on the caller's thread, for the answer;
	 * inspection and eviction go to the blocking store.
	 */
	private static final class SubscribedOnParallel implements LockingStore {

		private final ReactiveLockingStore reactive;

		private final LockingStore blocking;

		SubscribedOnParallel(ReactiveLockingStore reactive, LockingStore blocking) {
			this.reactive = reactive;
			this.blocking = blocking;
		}

		@Override
		public ClaimResult claim(String key, Duration lockTtl) {
			return await(this.reactive.claim(key, lockTtl));
		}

		@Override
		public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
			return await(this.reactive.complete(lease, record, ttl));
		}

		@Override
		public boolean release(Lease lease) {
			return await(this.reactive.release(lease));
		}

		@Override
		public boolean renew(Lease lease, Duration lockTtl) {
			return await(this.reactive.renew(lease, lockTtl));
		}

		@Override
		public boolean leaseExpires() {
			return this.reactive.leaseExpires();
		}

		@Override
		public RecordState inspect(String key) {
			return this.blocking.inspect(key);
		}

		@Override
		public boolean evict(String key) {
			return this.blocking.evict(key);
		}

		@Override
		public @Nullable AutoCloseable subscribeToEvictions(Consumer<String> listener) {
			return this.blocking.subscribeToEvictions(listener);
		}

		@Override
		public Map<String, Object> checkHealth() {
			return this.blocking.checkHealth();
		}

		@Override
		public String name() {
			return this.reactive.name();
		}

	}

}
