package dev.idempo.checks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import dev.idempo.checks.GatewayIdempotencyFilterTests.Backend;
import dev.idempo.testsupport.ApplicationProcess;
import dev.idempo.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * The gateway's {@code Idempotency} filter when a whole gateway dies: three gateways
 * ({@link CrashGateway}), each a JVM of its own, share one Redis store in front of one
 * backend that is no Spring application (a JDK {@code HttpServer} in this JVM that counts
 * how often each order runs), and the test kills gateway {@code a} with SIGKILL at a
 * precise point of a request, after the backend has answered. The client, which never got
 * an answer, retries through the other gateways.
 * <ul>
 * <li>Killed after the gateway stored the backend's response: the retry through another
 * gateway replays it; the backend ran once.</li>
 * <li>Killed after the backend answered and before the gateway stored: nothing was
 * stored, so the key stays claimed by the dead gateway until its lock expires
 * ({@code idempo.lock-ttl}, here {@value #LOCK_TTL_SECONDS} s); meanwhile every retry is
 * answered {@code 409} with {@code Retry-After}. Concurrent retrying clients, spread over
 * the two other gateways, then run the backend exactly once more when the claim expires,
 * and all other retries and later duplicates replay that second answer. This is the one
 * re-execution that a crash in that window can cost, as on Spring MVC: never more than
 * one, and never two at the same time.</li>
 * <li>Without the filter (the same backend behind a route without it), the retry after
 * the same kill runs the backend again: what the filter prevents, so these tests can
 * fail.</li>
 * </ul>
 * Each kill waits for the gateway to announce that the request is held at its point (a
 * file, see {@link CrashGateway}), never for a time. A chaos run (see "The chaos test" in
 * CONTRIBUTING.md): gateway JVMs start, die and start again, so {@code -Pchaos} runs it,
 * not the plain build.
 *
 * @author idempo
 */
@Tag("chaos")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayCrashTests {

	private static final int LOCK_TTL_SECONDS = 2;

	private static final String REPLAYED = "Idempotent-Replayed";

	private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(60);

	private static final Duration RETRY_TIMEOUT = Duration.ofSeconds(60);

	private final Backend backend = Backend.start();

	private final String keyPrefix = "idempo-gwcrash-" + UUID.randomUUID() + ":";

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private Path signals = Path.of("unset");

	private @Nullable ApplicationProcess a;

	private @Nullable ApplicationProcess b;

	private @Nullable ApplicationProcess c;

	@BeforeAll
	void startGateways() throws IOException {
		Path directory = Files.createDirectories(
				Path.of("target", "crash-tests", getClass().getSimpleName() + "-" + System.currentTimeMillis()));
		this.signals = Files.createDirectories(directory.resolve("signals"));
		String routes = "--spring.cloud.gateway.server.webflux.routes";
		List<String> arguments = List.of("--spring.main.banner-mode=off", "--spring.jmx.enabled=false",
				"--idempo.store.type=redis", "--spring.data.redis.url=" + TestRedis.server().url(),
				"--idempo.store.redis.key-prefix=" + this.keyPrefix, "--idempo.lock-ttl=" + LOCK_TTL_SECONDS + "s",
				"--gateway-crash.signal-dir=" + this.signals.toAbsolutePath(), routes + "[0].id=protected",
				routes + "[0].uri=" + this.backend.url(), routes + "[0].predicates[0]=Path=/protected/**",
				routes + "[0].filters[0]=Idempotency=1h,true", routes + "[1].id=plain",
				routes + "[1].uri=" + this.backend.url(), routes + "[1].predicates[0]=Path=/plain/**");
		// the gateways install BlockHound, which redefines JDK classes
		List<String> jvmOptions = List.of("-XX:+AllowRedefinitionToAddDeleteMethods");
		this.a = new ApplicationProcess(CrashGateway.class, "a", directory, jvmOptions, arguments);
		this.b = new ApplicationProcess(CrashGateway.class, "b", directory, jvmOptions, arguments);
		this.c = new ApplicationProcess(CrashGateway.class, "c", directory, jvmOptions, arguments);
		// the JVMs start at once: start-up waits on I/O as much as on the cores
		for (ApplicationProcess gateway : List.of(a(), b(), c())) {
			gateway.start();
		}
		for (ApplicationProcess gateway : List.of(a(), b(), c())) {
			gateway.awaitReady();
		}
	}

	@AfterAll
	void stopGateways() {
		try {
			stop(this.a);
			stop(this.b);
			stop(this.c);
		}
		finally {
			this.backend.server().stop(0);
			TestRedis.server().deleteKeys(this.keyPrefix);
		}
	}

	private static void stop(@Nullable ApplicationProcess gateway) {
		if (gateway != null && gateway.isAlive()) {
			gateway.kill();
		}
	}

	/** Every test starts with all gateways serving; a test that killed one left it so. */
	@BeforeEach
	void allGatewaysServe() {
		a().ensureReady();
		b().ensureReady();
		c().ensureReady();
	}

	/**
	 * SIGKILL after the gateway stored the backend's response, before the client got it:
	 * the retry through another gateway, and concurrent duplicates after it through both
	 * others, replay the response of the first run; the backend ran once.
	 */
	@Test
	@Timeout(180)
	void killedAfterTheGatewayStoredTheRetryThroughTheOtherGatewayReplays() throws Exception {
		String key = UUID.randomUUID().toString();
		String order = UUID.randomUUID().toString();
		CompletableFuture<HttpResponse<String>> held = sendHeld(a(), "/protected/orders", key, order,
				CrashGateway.AFTER_STORE);
		assertThat(awaitSignal(CrashGateway.AFTER_STORE, key, held, a())).isEqualTo("stored=true");
		assertThat(this.backend.runs(order)).isOne();
		a().kill();
		assertNoResponse(held);
		HttpResponse<String> retry = send(b(), "/protected/orders", key, order);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue(REPLAYED)).hasValue("true");
		assertThat(retry.body()).contains("\"run\":1,");
		Retries duplicates = retryConcurrently(List.of(b(), c()), "/protected/orders", key, order, 6);
		assertThat(duplicates.firstHand()).as("duplicates answered first-hand").isEmpty();
		assertThat(duplicates.bodies()).containsOnly(retry.body());
		assertThat(this.backend.runs(order)).as("runs of the backend").isOne();
	}

	/**
	 * SIGKILL after the backend answered and before the gateway stored: the key stays
	 * claimed until its lock expires, so the other gateways answer {@code 409} meanwhile;
	 * concurrent retrying clients through both then run the backend exactly once more,
	 * and all of them, and later duplicates, get that run's response.
	 */
	@Test
	@Timeout(180)
	void killedBeforeTheGatewayStoredTheRetriesRunTheBackendOnceMoreAndOnlyOnce() throws Exception {
		String key = UUID.randomUUID().toString();
		String order = UUID.randomUUID().toString();
		CompletableFuture<HttpResponse<String>> held = sendHeld(a(), "/protected/orders", key, order,
				CrashGateway.BEFORE_STORE);
		awaitSignal(CrashGateway.BEFORE_STORE, key, held, a());
		assertThat(this.backend.runs(order)).as("the backend has answered").isOne();
		HttpResponse<String> whileHeld = send(b(), "/protected/orders", key, order);
		assertThat(whileHeld.statusCode()).as("another gateway while the key is claimed").isEqualTo(409);
		assertThat(whileHeld.headers().firstValue("Retry-After")).isPresent();
		long killedAt = System.nanoTime();
		a().kill();
		assertNoResponse(held);
		Retries retries = retryConcurrently(List.of(b(), c()), "/protected/orders", key, order, 12);
		System.out.printf(
				"GatewayCrashTests: killed before the store; %d answers 409 and %d connection errors, "
						+ "then the backend's second run answered %d ms after the kill%n",
				retries.conflicts(), retries.connectionErrors.get(),
				TimeUnit.NANOSECONDS.toMillis(retries.firstHandAt - killedAt));
		assertThat(retries.conflicts()).as("409s while the dead gateway's claim lasted").isPositive();
		assertThat(retries.firstHand()).as("retries answered first-hand").hasSize(1);
		assertThat(retries.firstHand().get(0)).contains("\"run\":2,");
		assertThat(retries.bodies()).containsOnly(retries.firstHand().get(0));
		Retries later = retryConcurrently(List.of(b(), c()), "/protected/orders", key, order, 8);
		assertThat(later.firstHand()).as("later duplicates answered first-hand").isEmpty();
		assertThat(later.bodies()).containsOnly(retries.firstHand().get(0));
		assertThat(this.backend.runs(order)).as("runs of the backend: the first and one more").isEqualTo(2);
	}

	/**
	 * The same kill after the backend answered, on the route without the filter: the
	 * retry through another gateway runs the backend again.
	 */
	@Test
	@Timeout(180)
	void withoutTheFilterTheRetryAfterTheKillRunsTheBackendAgain() throws Exception {
		String key = UUID.randomUUID().toString();
		String order = UUID.randomUUID().toString();
		CompletableFuture<HttpResponse<String>> held = sendHeld(a(), "/plain/orders", key, order,
				CrashGateway.BEFORE_RESPONSE);
		assertThat(awaitSignal(CrashGateway.BEFORE_RESPONSE, key, held, a())).startsWith("201");
		assertThat(this.backend.runs(order)).isOne();
		a().kill();
		assertNoResponse(held);
		HttpResponse<String> retry = send(b(), "/plain/orders", key, order);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue(REPLAYED)).isEmpty();
		assertThat(this.backend.runs(order)).as("runs of the backend").isEqualTo(2);
	}

	private CompletableFuture<HttpResponse<String>> sendHeld(ApplicationProcess gateway, String path, String key,
			String order, String point) {
		HttpRequest request = request(gateway.port(), path, key, order).header(CrashGateway.PAUSE_HEADER, point)
			.build();
		return this.http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> send(ApplicationProcess gateway, String path, String key, String order)
			throws IOException, InterruptedException {
		return send(gateway.port(), path, key, order);
	}

	private HttpResponse<String> send(int port, String path, String key, String order)
			throws IOException, InterruptedException {
		return this.http.send(request(port, path, key, order).build(), HttpResponse.BodyHandlers.ofString());
	}

	private static HttpRequest.Builder request(int port, String path, String key, String order) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"order\":\"" + order + "\"}"));
	}

	/**
	 * Sends the same request from {@code clients} threads at once, each retrying on
	 * {@code 409} (which must carry {@code Retry-After}) and on connection errors until
	 * it gets {@code 201}, each attempt through the next gateway that serves.
	 */
	private Retries retryConcurrently(List<ApplicationProcess> gateways, String path, String key, String order,
			int clients) throws Exception {
		Retries retries = new Retries();
		ExecutorService threads = Executors.newFixedThreadPool(clients);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<String>>> answers = new ArrayList<>();
			for (int i = 0; i < clients; i++) {
				int first = i;
				answers.add(threads.submit(() -> {
					start.await();
					return retryUntilAnswered(gateways, first, path, key, order, retries);
				}));
			}
			start.countDown();
			for (Future<HttpResponse<String>> answer : answers) {
				retries.add(answer.get(RETRY_TIMEOUT.toSeconds() + 30, TimeUnit.SECONDS));
			}
		}
		finally {
			threads.shutdownNow();
		}
		return retries;
	}

	private HttpResponse<String> retryUntilAnswered(List<ApplicationProcess> gateways, int first, String path,
			String key, String order, Retries retries) throws InterruptedException {
		long deadline = System.nanoTime() + RETRY_TIMEOUT.toNanos();
		for (int attempt = first; System.nanoTime() < deadline; attempt++) {
			int port = gateways.get(attempt % gateways.size()).port();
			if (port == 0) {
				// dead or still starting: the next one, as a load balancer would
				continue;
			}
			try {
				HttpResponse<String> response = send(port, path, key, order);
				if (response.statusCode() != 409) {
					assertThat(response.statusCode()).as("answer %s", response.body()).isEqualTo(201);
					if (response.headers().firstValue(REPLAYED).isEmpty()) {
						retries.firstHandAt = System.nanoTime();
					}
					return response;
				}
				assertThat(response.headers().firstValue("Retry-After")).isPresent();
				retries.conflicts.incrementAndGet();
			}
			catch (IOException ex) {
				retries.connectionErrors.incrementAndGet();
			}
			// a retrying client's pause between attempts; it orders nothing
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
		return fail("No answer but 409 within " + RETRY_TIMEOUT);
	}

	/** Polls for the file that the gateway creates when a request reaches a pause. */
	private String awaitSignal(String point, String key, CompletableFuture<HttpResponse<String>> held,
			ApplicationProcess gateway) throws IOException {
		Path signal = this.signals.resolve(point + "-" + key);
		long deadline = System.nanoTime() + SIGNAL_TIMEOUT.toNanos();
		while (!Files.exists(signal)) {
			if (held.isDone()) {
				fail("The request answered instead of pausing at " + point + ": " + held.join().statusCode() + " "
						+ held.join().body());
			}
			if (!gateway.isAlive()) {
				fail(gateway.incarnationName() + " died before pausing at " + point + ":\n" + gateway.logTail());
			}
			if (System.nanoTime() > deadline) {
				fail("Timed out waiting for the pause " + point + " of " + gateway.incarnationName() + ":\n"
						+ gateway.logTail());
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
		return Files.readString(signal, StandardCharsets.UTF_8);
	}

	/** The client of a killed gateway gets no response at all, only a dead connection. */
	private static void assertNoResponse(CompletableFuture<HttpResponse<String>> held) {
		assertThatThrownBy(() -> held.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
			.hasCauseInstanceOf(IOException.class);
	}

	private ApplicationProcess a() {
		ApplicationProcess gateway = this.a;
		assertThat(gateway).as("gateway a").isNotNull();
		return gateway;
	}

	private ApplicationProcess b() {
		ApplicationProcess gateway = this.b;
		assertThat(gateway).as("gateway b").isNotNull();
		return gateway;
	}

	private ApplicationProcess c() {
		ApplicationProcess gateway = this.c;
		assertThat(gateway).as("gateway c").isNotNull();
		return gateway;
	}

	/**
	 * What concurrent retrying clients got: their 201 answers and what they retried on.
	 */
	private static final class Retries {

		private final List<HttpResponse<String>> answers = new ArrayList<>();

		final AtomicInteger conflicts = new AtomicInteger();

		final AtomicInteger connectionErrors = new AtomicInteger();

		/** When a first-hand answer arrived ({@link System#nanoTime()}). */
		volatile long firstHandAt;

		synchronized void add(HttpResponse<String> answer) {
			this.answers.add(answer);
		}

		int conflicts() {
			return this.conflicts.get();
		}

		/** The bodies of the answers that were not replays. */
		synchronized List<String> firstHand() {
			return this.answers.stream()
				.filter((answer) -> answer.headers().firstValue(REPLAYED).isEmpty())
				.map(HttpResponse::body)
				.toList();
		}

		synchronized List<String> bodies() {
			return this.answers.stream().map(HttpResponse::body).toList();
		}

	}

}
