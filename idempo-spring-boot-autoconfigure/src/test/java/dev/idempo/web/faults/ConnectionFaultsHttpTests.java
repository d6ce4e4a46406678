package dev.idempo.web.faults;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.idempo.testsupport.TcpProxy;
import dev.idempo.web.TestHttp;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Cut and slow connections between a running application and its store, one subclass per
 * store: the application reaches the store only through a {@link TcpProxy} that the test
 * switches between forwarding, resetting connections at the server's reply (the server
 * did the work, the client never learns of it), resetting every connection, black-holing
 * them (nothing passes, nothing is closed: only timeouts end a wait) and adding latency.
 * Whatever the fault, every request is answered within its store's bound (the HTTP client
 * waits far longer, so a hang fails an assertion rather than the build), never with a
 * 500; a handler never runs twice for a key whose response was stored, never alongside
 * itself, and a replay is always byte for byte one execution's response; and once the
 * proxy forwards again, the same application instance serves new keys and the keys the
 * fault interrupted.
 * <p>
 * What a client gets when the store fails <em>after</em> its handler ran (the complete is
 * cut): the handler's own response, never a 503, because the handler's effects have
 * happened and a 503 would invite a retry. Whether that response was stored is then
 * unknown to the instance; a retry replays it if the store took it, and runs the handler
 * again only if nothing was stored.
 * <p>
 * The bounds, with the store's operation timeout {@link #TIMEOUT} (1 second): see
 * {@link #claimBound()}, {@link #completeBound()} and {@link #leftBehindBound()} in each
 * subclass. {@link #MARGIN} allows for two shared, loaded cores.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempo.lock-ttl=" + ConnectionFaultsHttpTests.LOCK_TTL_SECONDS + "s" })
abstract class ConnectionFaultsHttpTests {

	/** The store's operation timeout, as each subclass configures it. */
	static final Duration TIMEOUT = Duration.ofSeconds(1);

	/** The lease of the stores whose claims expire (Redis). */
	static final int LOCK_TTL_SECONDS = 2;

	static final Duration LOCK_TTL = Duration.ofSeconds(LOCK_TTL_SECONDS);

	/** Scheduling slack on two shared cores with other builds running. */
	static final Duration MARGIN = Duration.ofSeconds(2);

	/** Far above every bound: a request that takes this long has hung. */
	private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(45);

	private static final int DUPLICATES = 16;

	private final ExecutorService clients = Executors.newCachedThreadPool();

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	private TestHttp http;

	/**
	 * The proxy between the application and its store.
	 * @return the proxy
	 */
	abstract TcpProxy proxy();

	/**
	 * The longest a claim may take when the store's connection is cut, black-holed or
	 * slower than the timeout, before it is answered 503.
	 * @return the bound
	 */
	abstract Duration claimBound();

	/**
	 * The longest the end of a request (storing its response, or releasing its key) may
	 * take when the store's connection is cut or black-holed, after its handler returned.
	 * @return the bound
	 */
	abstract Duration completeBound();

	/**
	 * The longest a key whose claim or complete was cut may stay taken (409) or
	 * unanswered (503) once the proxy forwards again, before a retry is served.
	 * @return the bound
	 */
	abstract Duration leftBehindBound();

	@BeforeEach
	void healthy() {
		this.http = new TestHttp(this.port);
		this.proxy().forward();
		servesNewKeys(Duration.ofSeconds(30));
	}

	@AfterEach
	void endFaults() {
		this.executions.releaseHandlers();
		this.proxy().forward();
		this.clients.shutdownNow();
	}

	@Test
	void resetDuringClaimIs503AndTheKeyRunsOnceAfterHealing() {
		String key = TestHttp.newKey();
		proxy().resetOnReply();
		Response cut = post("/t/per-key", key);
		report("reset during claim", cut);
		assertStoreUnavailable(cut, claimBound());
		assertThat(this.executions.count("per-key:" + key)).isZero();
		long healed = heal();
		Response retried = settle("/t/per-key", key, leftBehindBound());
		report("reset during claim, then healed: retry served " + since(healed), retried);
		assertThat(retried.status()).isEqualTo(200);
		assertThat(retried.replayed()).isFalse();
		assertThat(this.executions.count("per-key:" + key)).isEqualTo(1);
		assertReplays("/t/per-key", key, retried);
		assertThat(this.executions.count("per-key:" + key)).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(names = { "RESET_ON_REPLY", "RESET_ALL", "BLACK_HOLE" })
	void faultDuringCompleteAnswersTheHandlersResponseAndNeverTearsTheRecord(Fault fault) throws Exception {
		String key = TestHttp.newKey();
		String path = "/t/held?size=40000";
		this.executions.holdHandlers();
		CompletableFuture<Response> first = async(() -> post(path, key));
		assertThat(this.executions.awaitEntered()).isTrue();
		fault.apply(proxy());
		long released = System.nanoTime();
		this.executions.releaseHandlers();
		Response answered = first.get(CLIENT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		Duration afterHandler = Duration.ofNanos(System.nanoTime() - released);
		report(fault + " during complete: the handler's response " + afterHandler.toMillis()
				+ " ms after the handler returned", answered);
		assertThat(answered.status()).isEqualTo(200);
		assertThat(answered.replayed()).isFalse();
		assertThat(afterHandler).isLessThan(completeBound());
		assertThat(this.executions.count("held:" + key)).isEqualTo(1);
		long healed = heal();
		Response retried = settle(path, key, leftBehindBound());
		report(fault + " during complete, then healed: retry served " + since(healed), retried);
		assertThat(retried.status()).isEqualTo(200);
		if (retried.replayed()) {
			// the store took the response although the instance could not tell
			assertThat(retried.body()).isEqualTo(answered.body());
			assertThat(this.executions.count("held:" + key)).isEqualTo(1);
		}
		else {
			// nothing was stored: the retry ran the handler once more
			assertThat(retried.body()).isNotEqualTo(answered.body());
			assertThat(this.executions.count("held:" + key)).isEqualTo(2);
		}
		int executions = this.executions.count("held:" + key);
		assertReplays(path, key, retried);
		assertThat(this.executions.count("held:" + key)).isEqualTo(executions);
	}

	@Test
	void blackHoleDuringClaimIs503WithinTheBoundAndTheInstanceRecovers() {
		String key = TestHttp.newKey();
		proxy().blackHole();
		Response held = post("/t/per-key", key);
		report("black hole during claim", held);
		assertStoreUnavailable(held, claimBound());
		assertThat(this.executions.count("per-key:" + key)).isZero();
		long healed = heal();
		servesNewKeys(leftBehindBound());
		report("black hole during claim, then healed: new keys served " + since(healed), null);
		Response retried = settle("/t/per-key", key, leftBehindBound());
		report("black hole during claim, then healed: retry served " + since(healed), retried);
		assertThat(retried.status()).isEqualTo(200);
		assertThat(this.executions.count("per-key:" + key)).isEqualTo(1);
		assertReplays("/t/per-key", key, retried);
	}

	@Test
	void latencyBelowTheTimeoutOnlySlowsRequestsDown() {
		Duration latency = TIMEOUT.dividedBy(8);
		proxy().latency(latency);
		for (int i = 0; i < 3; i++) {
			String key = TestHttp.newKey();
			Response first = post("/t/per-key", key);
			report("latency " + latency.toMillis() + " ms per direction", first);
			assertThat(first.status()).isEqualTo(200);
			assertThat(first.replayed()).isFalse();
			assertReplays("/t/per-key", key, first);
			assertThat(this.executions.count("per-key:" + key)).isEqualTo(1);
		}
	}

	@Test
	void latencyAboveTheTimeoutIs503WithinTheBoundAndHealingRestoresService() {
		String key = TestHttp.newKey();
		proxy().latency(TIMEOUT.plusMillis(500));
		Response slow = post("/t/per-key", key);
		report("latency " + proxy().latency().toMillis() + " ms per direction", slow);
		assertStoreUnavailable(slow, claimBound());
		assertThat(this.executions.count("per-key:" + key)).isZero();
		long healed = heal();
		servesNewKeys(leftBehindBound());
		Response retried = settle("/t/per-key", key, leftBehindBound());
		report("latency above the timeout, then healed: retry served " + since(healed), retried);
		assertThat(retried.status()).isEqualTo(200);
		assertThat(this.executions.count("per-key:" + key)).isEqualTo(1);
		assertReplays("/t/per-key", key, retried);
	}

	@ParameterizedTest
	@EnumSource(names = { "BLACK_HOLE", "RESET_ON_REPLY" })
	void concurrentDuplicatesUnderAFaultRunTheHandlerAtMostOnce(Fault fault) throws Exception {
		String key = TestHttp.newKey();
		fault.apply(proxy());
		List<Response> during = duplicates("/t/per-key", key);
		report(fault + ", " + DUPLICATES + " concurrent duplicates", slowest(during));
		for (Response response : during) {
			assertThat(response.status()).as("status during the fault").isIn(409, 503);
			assertThat(response.elapsed()).isLessThan(claimBound());
		}
		assertThat(this.executions.count("per-key:" + key)).isZero();
		long healed = heal();
		// rounds of concurrent duplicates until one of them has run the handler
		AtomicReference<Response> executed = new AtomicReference<>();
		List<Response> seen = new ArrayList<>();
		await().atMost(leftBehindBound()).pollInterval(Duration.ofMillis(100)).until(() -> {
			List<Response> round = duplicates("/t/per-key", key);
			seen.addAll(round);
			assertThat(this.executions.count("per-key:" + key)).isLessThanOrEqualTo(1);
			round.stream().filter((response) -> response.status() == 200).findFirst().ifPresent(executed::set);
			return executed.get() != null;
		});
		report(fault + ", then healed: executed " + since(healed), executed.get());
		assertThat(this.executions.count("per-key:" + key)).isEqualTo(1);
		Response fresh = seen.stream()
			.filter((response) -> response.status() == 200 && !response.replayed())
			.findFirst()
			.orElseThrow();
		for (Response response : seen) {
			assertThat(response.status()).as("status after healing").isIn(200, 409, 503);
			if (response.status() == 200) {
				assertThat(response.body()).isEqualTo(fresh.body());
			}
		}
		assertReplays("/t/per-key", key, fresh);
		assertThat(this.executions.count("per-key:" + key)).isEqualTo(1);
	}

	// ---- helpers

	/** What the proxy does to the store's connections. */
	enum Fault {

		RESET_ON_REPLY(TcpProxy::resetOnReply),

		RESET_ALL(TcpProxy::resetAll),

		BLACK_HOLE(TcpProxy::blackHole);

		private final Consumer<TcpProxy> action;

		Fault(Consumer<TcpProxy> action) {
			this.action = action;
		}

		void apply(TcpProxy proxy) {
			this.action.accept(proxy);
		}

	}

	record Response(int status, byte[] body, boolean replayed, String text, boolean retryAfter, Duration elapsed) {

		static Response of(HttpResponse<byte[]> response, Duration elapsed) {
			String text = new String(response.body(), StandardCharsets.UTF_8);
			return new Response(response.statusCode(), response.body(),
					response.headers().firstValue("Idempotent-Replayed").isPresent(), text,
					response.headers().firstValue("Retry-After").isPresent(), elapsed);
		}

		@Override
		public String toString() {
			return this.status + " after " + this.elapsed.toMillis() + " ms" + (this.replayed ? " (replayed)" : "");
		}

	}

	private Response post(String path, String key) {
		long start = System.nanoTime();
		HttpResponse<byte[]> response = this.http
			.send(this.http.request("POST", path, "{}", "Idempotency-Key", key).timeout(CLIENT_TIMEOUT));
		return Response.of(response, Duration.ofNanos(System.nanoTime() - start));
	}

	private <T> CompletableFuture<T> async(Supplier<T> task) {
		return CompletableFuture.supplyAsync(task, this.clients);
	}

	/** {@value #DUPLICATES} requests with one key, released at once. */
	private List<Response> duplicates(String path, String key) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<CompletableFuture<Response>> futures = new ArrayList<>();
		for (int i = 0; i < DUPLICATES; i++) {
			futures.add(async(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return post(path, key);
			}));
		}
		start.countDown();
		List<Response> responses = new ArrayList<>();
		for (CompletableFuture<Response> future : futures) {
			responses.add(future.get(CLIENT_TIMEOUT.toSeconds(), TimeUnit.SECONDS));
		}
		return responses;
	}

	private static Response slowest(List<Response> responses) {
		return responses.stream().max((a, b) -> a.elapsed().compareTo(b.elapsed())).orElseThrow();
	}

	/**
	 * Retries {@code key} while it is taken (409) or the store does not answer (503), and
	 * returns the first other answer; fails if none comes within {@code bound}.
	 */
	private Response settle(String path, String key, Duration bound) {
		AtomicReference<Response> last = new AtomicReference<>();
		await().atMost(bound).pollInterval(Duration.ofMillis(100)).until(() -> {
			Response response = post(path, key);
			last.set(response);
			assertThat(response.status()).as("status while settling").isIn(200, 409, 503);
			return response.status() == 200;
		});
		return last.get();
	}

	/** A new key is served within {@code bound}: the instance works. */
	private void servesNewKeys(Duration bound) {
		settle("/t/per-key", TestHttp.newKey(), bound);
	}

	private void assertReplays(String path, String key, Response original) {
		Response replay = post(path, key);
		assertThat(replay.status()).isEqualTo(original.status());
		assertThat(replay.replayed()).isTrue();
		assertThat(replay.body()).isEqualTo(original.body());
	}

	private static void assertStoreUnavailable(Response response, Duration bound) {
		assertThat(response.status()).isEqualTo(503);
		assertThat(response.text()).contains("https://idempo.dev/problems/store-unavailable");
		assertThat(response.retryAfter()).isTrue();
		assertThat(response.elapsed()).isLessThan(bound);
	}

	/** Lets the proxy forward again. */
	private long heal() {
		proxy().forward();
		return System.nanoTime();
	}

	private static String since(long nanoTime) {
		return Duration.ofNanos(System.nanoTime() - nanoTime).toMillis() + " ms after healing";
	}

	private void report(String what, @Nullable Response response) {
		System.out.println("[idempo faults] " + getClass().getSimpleName() + ": " + what
				+ ((response != null) ? ": " + response : ""));
	}

}
