package dev.idempo.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.testsupport.MutableClock;
import dev.idempo.web.IdempotentExecution.Phase;

import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The phase of one execution: which events move it, and that it ends exactly once
 * whichever threads race to end it.
 *
 * @author idempo
 */
class IdempotentExecutionTests {

	private static final IdempotencySettings settings = IdempotencySettings.defaults();

	private final MutableClock clock = new MutableClock();

	private final InMemoryLockingStore store = new InMemoryLockingStore(this.clock, 10_000, 64L * 1024 * 1024);

	private final LeaseRenewer leaseRenewer = new LeaseRenewer();

	private final Events events = new Events();

	private final ExecutorService threads = Executors.newFixedThreadPool(4);

	private int keys;

	@AfterEach
	void shutDown() {
		this.threads.shutdownNow();
		this.leaseRenewer.destroy();
	}

	static Stream<Arguments> transitions() {
		return Stream.of(path(Phase.RUNNING), path(Phase.CALLABLE_RUNNING, IdempotentExecution::callableStarted),
				path(Phase.CALLABLE_RETURNED, IdempotentExecution::callableStarted,
						IdempotentExecution::callableReturned),
				// a Callable whose result streams starts a second one
				path(Phase.CALLABLE_RUNNING, IdempotentExecution::callableStarted,
						IdempotentExecution::callableReturned, IdempotentExecution::callableStarted),
				path(Phase.AWAITING_ERROR_PAGE, IdempotentExecution::awaitErrorPage),
				path(Phase.AWAITING_ERROR_PAGE, IdempotentExecution::callableStarted,
						IdempotentExecution::callableReturned, IdempotentExecution::awaitErrorPage),
				// Tomcat reports sendError in an async dispatch as an async error
				path(Phase.AWAITING_ERROR_PAGE, IdempotentExecution::awaitErrorPage, IdempotentExecution::abandoned),
				path(Phase.ABANDONED, IdempotentExecution::abandoned),
				path(Phase.ABANDONED, IdempotentExecution::abandoned, IdempotentExecution::abandoned,
						IdempotentExecution::awaitErrorPage),
				path(Phase.ABANDONED_CALLABLE_RUNNING, IdempotentExecution::callableStarted,
						IdempotentExecution::abandoned),
				path(Phase.ABANDONED_CALLABLE_RUNNING, IdempotentExecution::abandoned,
						IdempotentExecution::callableStarted),
				path(Phase.ABANDONED_CALLABLE_RETURNED, IdempotentExecution::callableStarted,
						IdempotentExecution::abandoned, IdempotentExecution::callableReturned),
				path(Phase.ABANDONED_CALLABLE_RETURNED, IdempotentExecution::callableStarted,
						IdempotentExecution::callableReturned, IdempotentExecution::abandoned),
				path(Phase.RELEASE_WHEN_CALLABLE_RETURNS, IdempotentExecution::callableStarted,
						IdempotentExecution::requestEnded),
				path(Phase.RELEASE_WHEN_CALLABLE_RETURNS, IdempotentExecution::callableStarted,
						IdempotentExecution::abandoned, IdempotentExecution::requestEnded,
						IdempotentExecution::requestEnded, IdempotentExecution::abandoned),
				path(Phase.ENDED, IdempotentExecution::callableStarted, IdempotentExecution::requestEnded,
						IdempotentExecution::callableReturned),
				path(Phase.ENDED, IdempotentExecution::fail, IdempotentExecution::callableStarted,
						IdempotentExecution::abandoned, IdempotentExecution::awaitErrorPage),
				path(Phase.ENDED, IdempotentExecution::awaitErrorPage, IdempotentExecution::requestEnded),
				path(Phase.ENDED, IdempotentExecution::abandoned, IdempotentExecution::requestEnded,
						IdempotentExecution::callableStarted));
	}

	@SafeVarargs
	private static Arguments path(Phase expected, Consumer<IdempotentExecution>... events) {
		return Arguments.of(expected, List.of(events));
	}

	@ParameterizedTest
	@MethodSource("transitions")
	void eventsMoveThePhaseOnlyWhereTheyApply(Phase expected, List<Consumer<IdempotentExecution>> path) {
		IdempotentExecution execution = start(NotStoredReason.NONE);
		path.forEach((event) -> event.accept(execution));
		assertThat(execution.phase()).isEqualTo(expected);
	}

	@Test
	void finishStoresTheResponseOnceAndLaterEndsAreNoOps() throws IOException {
		IdempotentExecution execution = start(NotStoredReason.NONE);
		CapturingResponse response = response(201, "{\"id\":1}");
		assertThat(execution.finish(response)).isTrue();
		assertThat(execution.finish(response)).isFalse();
		assertThat(execution.fail()).isFalse();
		assertThat(execution.requestEnded()).isFalse();
		assertThat(execution.callableReturned()).isFalse();
		assertThat(this.events.all()).containsExactly("stored/none");
		ClaimResult replay = this.store.claim(key(), settings.lockTtl());
		assertThat(replay).isInstanceOf(ClaimResult.Completed.class);
		StoredRecord record = ((ClaimResult.Completed) replay).record();
		assertThat(record.fingerprint()).isEqualTo("fp");
		assertThat(new String(ResponseEnvelope.decode(record.response()).body(), StandardCharsets.UTF_8))
			.isEqualTo("{\"id\":1}");
	}

	@Test
	void concurrentEndsEndItExactlyOnce() throws Exception {
		for (int i = 0; i < 300; i++) {
			IdempotentExecution execution = start(NotStoredReason.NONE);
			CapturingResponse response = response(200, "ok");
			List<Boolean> ended = race(() -> execution.finish(response), execution::fail, execution::requestEnded,
					execution::abandoned);
			assertThat(ended.subList(0, 3)).as("round %d", i).containsOnlyOnce(true);
			assertThat(execution.phase()).isEqualTo(Phase.ENDED);
			List<String> outcome = this.events.takeAll();
			assertThat(outcome).as("round %d", i).hasSize(1);
			ClaimResult after = this.store.claim(key(), settings.lockTtl());
			switch (outcome.get(0)) {
				case "stored/none" -> assertThat(after).isInstanceOf(ClaimResult.Completed.class);
				case "not_stored/exception" -> assertThat(after).isInstanceOf(ClaimResult.Acquired.class);
				// abandoned first: the lease lapses rather than being released
				case "not_stored/async_timeout" -> assertThat(after).isInstanceOf(ClaimResult.InProgress.class);
				default -> throw new AssertionError("round " + i + ": " + outcome);
			}
		}
	}

	@Test
	void callableOutlivingItsRequestKeepsTheKeyUntilItReturns() {
		IdempotentExecution execution = start(NotStoredReason.NONE);
		execution.callableStarted();
		execution.abandoned();
		assertThat(execution.requestEnded()).isFalse();
		assertThat(this.store.claim(key(), settings.lockTtl())).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.events.all()).isEmpty();
		assertThat(execution.callableReturned()).isTrue();
		assertThat(this.events.all()).containsExactly("not_stored/async_timeout");
		assertThat(this.store.claim(key(), settings.lockTtl())).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void callableReturningAsItsRequestEndsReleasesTheKeyOnce() throws Exception {
		for (int i = 0; i < 300; i++) {
			IdempotentExecution execution = start(NotStoredReason.NONE);
			execution.callableStarted();
			execution.abandoned();
			race(execution::callableReturned, execution::requestEnded);
			assertThat(execution.phase()).as("round %d", i).isEqualTo(Phase.ENDED);
			assertThat(this.events.takeAll()).as("round %d", i).containsExactly("not_stored/async_timeout");
			assertThat(this.store.claim(key(), settings.lockTtl())).isInstanceOf(ClaimResult.Acquired.class);
		}
	}

	@Test
	void abandonedWorkThatDoesNotSayWhenItEndsLetsTheLeaseLapse() throws IOException {
		IdempotentExecution execution = start(NotStoredReason.NONE);
		assertThat(execution.abandoned()).isTrue();
		assertThat(execution.finish(response(503, "timed out"))).isTrue();
		assertThat(this.events.all()).containsExactly("not_stored/async_timeout");
		assertThat(this.store.claim(key(), settings.lockTtl())).isInstanceOf(ClaimResult.InProgress.class);
		this.clock.advance(settings.lockTtl().plusSeconds(1));
		assertThat(this.store.claim(key(), settings.lockTtl())).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void errorPageIsAwaitedThenStored() throws IOException {
		IdempotentExecution execution = start(NotStoredReason.NONE);
		assertThat(execution.awaitErrorPage()).isTrue();
		assertThat(execution.isAwaitingErrorPage()).isTrue();
		assertThat(execution.finish(response(404, "not found"))).isTrue();
		assertThat(execution.isAwaitingErrorPage()).isFalse();
		assertThat(this.events.all()).containsExactly("stored/none");
	}

	@Test
	void errorPageThatNeverCameReleasesTheKeyWhenTheRequestEnds() {
		IdempotentExecution execution = start(NotStoredReason.NONE);
		execution.awaitErrorPage();
		assertThat(execution.requestEnded()).isTrue();
		assertThat(this.events.all()).containsExactly("not_stored/error_page");
		assertThat(this.store.claim(key(), settings.lockTtl())).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void sendErrorWithNoErrorPageToAwaitStoresTheStatusWithoutABody() throws IOException {
		IdempotentExecution execution = start(NotStoredReason.NONE);
		CapturingResponse response = response(404, "discarded by sendError");
		response.setHeader("X-Trace", "t1");
		response.sendError(404, "no such thing");
		assertThat(execution.finish(response)).isTrue();
		assertThat(this.events.all()).containsExactly("stored/none");
		StoredRecord record = ((ClaimResult.Completed) this.store.claim(key(), settings.lockTtl())).record();
		assertThat(ResponseEnvelope.decode(record.response()).status()).isEqualTo(404);
		assertThat(ResponseEnvelope.decode(record.response()).body()).isEmpty();
		assertThat(ResponseEnvelope.decode(record.response()).headers()).containsEntry("X-Trace", List.of("t1"));
	}

	@Test
	void rejectionBeforeTheHandlerReleasesWhateverTheResponseAndEndsOnce() throws IOException {
		IdempotentExecution execution = start(NotStoredReason.NONE);
		assertThat(execution.rejectedBeforeHandler()).isTrue();
		assertThat(execution.finish(response(400, "bad body"))).isFalse();
		assertThat(execution.awaitErrorPage()).isFalse();
		assertThat(execution.requestEnded()).isFalse();
		assertThat(execution.phase()).isEqualTo(Phase.ENDED);
		assertThat(this.events.all()).containsExactly("not_stored/rejected_before_handler");
		assertThat(this.store.claim(key(), settings.lockTtl())).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void responsesThePolicyOrTheCaptureRulesOutAreReleased() throws IOException {
		start(NotStoredReason.DISABLED).finish(response(200, "ok"));
		CapturingResponse streamed = response(200, "chunk");
		streamed.stopCapture();
		start(NotStoredReason.NONE).finish(streamed);
		start(NotStoredReason.NONE).finish(response(500, "boom"));
		assertThat(this.events.all()).containsExactly("not_stored/disabled", "not_stored/streaming",
				"not_stored/status");
	}

	@Test
	void leaseFoundLostWhileRunningIsNotStored() throws IOException {
		LockingStore refusingRenewals = new RefusingRenewals(this.store);
		IdempotencySettings shortLease = new IdempotencySettings("Idempotency-Key", List.of(), false,
				Duration.ofHours(1), Duration.ofMillis(30), 1024, 1024, settings.excludedHeaders(),
				Duration.ofSeconds(1), Duration.ZERO, false, Duration.ofSeconds(5));
		String key = key();
		Lease lease = ((ClaimResult.Acquired) refusingRenewals.claim(key, Duration.ofHours(1))).lease();
		IdempotentExecution execution = IdempotentExecution.start(refusingRenewals, this.events, shortLease,
				this.leaseRenewer, lease, "fp", Duration.ofHours(1), ResponseStoragePolicy.DEFAULT,
				NotStoredReason.NONE);
		await().atMost(Duration.ofSeconds(10)).until(execution::isLeaseLost);
		assertThat(execution.finish(response(200, "ok"))).isTrue();
		assertThat(this.events.all()).containsExactly("lock_lost/none");
		// the store would still have taken it: only the lost renewal kept it out
		assertThat(this.store.claim(key, settings.lockTtl())).isInstanceOf(ClaimResult.Acquired.class);
	}

	private IdempotentExecution start(NotStoredReason policyReason) {
		this.keys++;
		Lease lease = ((ClaimResult.Acquired) this.store.claim(key(), settings.lockTtl())).lease();
		return IdempotentExecution.start(this.store, this.events, settings, this.leaseRenewer, lease, "fp",
				Duration.ofHours(1), ResponseStoragePolicy.DEFAULT, policyReason);
	}

	private String key() {
		return "key-" + this.keys;
	}

	private static CapturingResponse response(int status, String body) throws IOException {
		CapturingResponse response = new CapturingResponse(new MockHttpServletResponse());
		response.startCapture(settings.maxResponseSize());
		response.setStatus(status);
		response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
		return response;
	}

	/** Runs every task at once on its own thread; what each returned, in order. */
	@SafeVarargs
	private List<Boolean> race(Callable<Boolean>... tasks) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Boolean>> futures = new ArrayList<>();
		for (Callable<Boolean> task : tasks) {
			futures.add(this.threads.submit(() -> {
				start.await();
				return task.call();
			}));
		}
		start.countDown();
		List<Boolean> results = new ArrayList<>();
		for (Future<Boolean> future : futures) {
			results.add(future.get(10, TimeUnit.SECONDS));
		}
		return results;
	}

	private static final class Events implements IdempotencyListener {

		private final Queue<String> responses = new ConcurrentLinkedQueue<>();

		@Override
		public void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
			this.responses.add(outcome.tag() + "/" + reason.tag());
		}

		List<String> all() {
			return List.copyOf(this.responses);
		}

		List<String> takeAll() {
			List<String> all = new ArrayList<>();
			String next;
			while ((next = this.responses.poll()) != null) {
				all.add(next);
			}
			return all;
		}

	}

	/**
	 * The memory store, except that every renewal is refused as if the lease had gone.
	 */
	private static final class RefusingRenewals implements LockingStore {

		private final LockingStore delegate;

		RefusingRenewals(LockingStore delegate) {
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
			return false;
		}

		@Override
		public boolean leaseExpires() {
			return true;
		}

	}

}
