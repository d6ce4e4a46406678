package dev.idempo.webflux;

import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.idempo.core.StorageKeys;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.OffloadedLockingStore;
import dev.idempo.web.HandlerExecutions;
import dev.idempo.web.RequestFlowHttpContract;
import dev.idempo.web.TestHttp;
import dev.idempo.webflux.testapp.ReactiveExecutions;
import dev.idempo.webflux.testapp.SwitchableReactiveStore;
import dev.idempo.webflux.testapp.WebFluxTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The request flow of annotated WebFlux handlers over real HTTP, on Reactor Netty with
 * BlockHound installed: the store-neutral contract Spring MVC passes too
 * ({@link RequestFlowHttpContract}), and what a reactive handler adds (responses that are
 * not stored, streams, errors, store outages). Each store has a subclass that points the
 * application at it; every store is reached through the auto-configured
 * {@code ReactiveLockingStore}.
 *
 * @author idempo
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
abstract class WebFluxHttpContractTests extends RequestFlowHttpContract {

	@Autowired
	ReactiveExecutions executions;

	@Autowired
	SwitchableReactiveStore store;

	@Override
	protected String path(String endpoint) {
		return "/t" + endpoint;
	}

	@Override
	protected HandlerExecutions executions() {
		return this.executions;
	}

	/**
	 * The type of the blocking store the application was pointed at.
	 * @return the type
	 */
	abstract Class<?> storeType();

	/**
	 * How the store is served without blocking a caller's thread: offloaded to
	 * boundedElastic unless the store has a better way.
	 * @return the type of the reactive store
	 */
	Class<?> reactiveStoreType() {
		return OffloadedLockingStore.class;
	}

	@Test
	void runsOnTheConfiguredStoreWithoutBlockingItsCallers() {
		Object reactive = this.store.delegate();
		assertThat(reactive).isInstanceOf(reactiveStoreType());
		if (reactive instanceof OffloadedLockingStore offloaded) {
			assertThat(offloaded.delegate()).isInstanceOf(storeType());
		}
	}

	@Test
	void replayLeavesOutDeniedHeaders() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.postWithKey(path("/orders"), key, "{\"item\":\"pen\",\"quantity\":1}");
		HttpResponse<byte[]> replay = this.http.postWithKey(path("/orders"), key, "{\"item\":\"pen\",\"quantity\":1}");
		assertThat(first.headers().firstValue("Set-Cookie")).isPresent();
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("Set-Cookie")).isEmpty();
		assertThat(replay.headers().firstValue("X-Order-Execution"))
			.isEqualTo(first.headers().firstValue("X-Order-Execution"));
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
	}

	/**
	 * Records belong to (caller, key): two authenticated callers using one key each run
	 * the handler and each get their own response replayed.
	 */
	@Test
	void callersWithTheSameKeyNeverSeeEachOthersRecords() {
		String key = TestHttp.newKey();
		int before = this.executions.count("object");
		HttpResponse<byte[]> alice = postAs("alice", key);
		HttpResponse<byte[]> bob = postAs("bob", key);
		assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(bob.body()).isNotEqualTo(alice.body());
		assertThat(this.executions.count("object")).isEqualTo(before + 2);
		HttpResponse<byte[]> aliceAgain = postAs("alice", key);
		assertThat(aliceAgain.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(aliceAgain.body()).isEqualTo(alice.body());
	}

	private HttpResponse<byte[]> postAs(String user, String key) {
		HttpResponse<byte[]> response = this.http.post(path("/object"), "{}", "Idempotency-Key", key, "Authorization",
				TestHttp.basic(user));
		assertThat(response.statusCode()).isEqualTo(200);
		return response;
	}

	@Test
	void missingKeyOnARequiredHandlerIs400() {
		int before = this.executions.count("required");
		HttpResponse<byte[]> response = this.http.post(path("/required"), "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(response)).contains("\"type\":\"https://idempo.dev/problems/missing-key\"")
			.contains("\"title\":\"Idempotency key required\"")
			.contains("\"instance\":\"/t/required\"");
		assertThat(this.executions.count("required")).isEqualTo(before);
	}

	@Test
	void invalidKeyIs400AndDoesNotRunTheHandler() {
		int before = this.executions.count("object");
		HttpResponse<byte[]> response = this.http.postWithKey(path("/object"), "k".repeat(256), "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(TestHttp.text(response)).contains("\"type\":\"https://idempo.dev/problems/invalid-key\"");
		assertThat(this.executions.count("object")).isEqualTo(before);
	}

	@Test
	void serverErrorIsNotStoredAndReleasesTheKey() {
		assertRunsEveryTime("/server-error", "server-error", 500);
	}

	@Test
	void errorOfTheHandlerReleasesTheKey() {
		assertRunsEveryTime("/fails", "fails", 500);
	}

	@Test
	void serverSentEventsAreNotStored() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.postWithKey(path("/events"), key, "{}");
		HttpResponse<byte[]> second = this.http.postWithKey(path("/events"), key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("text/event-stream"));
		assertThat(TestHttp.text(first)).contains("data:");
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(second.body()).isNotEqualTo(first.body());
	}

	@Test
	void handlerWithoutTheAnnotationIsNotProtected() {
		assertRunsEveryTime("/unprotected", "unprotected", 200);
	}

	@Test
	void storeOutageIs503AndDoesNotRunTheHandler() {
		int before = this.executions.count("orders");
		this.store.setDown(true);
		try {
			HttpResponse<byte[]> response = this.http.postWithKey(path("/orders"), TestHttp.newKey(),
					"{\"item\":\"book\",\"quantity\":2}");
			assertThat(response.statusCode()).isEqualTo(503);
			assertThat(response.headers().firstValue("Retry-After")).hasValue("5");
			assertThat(TestHttp.text(response)).contains("\"type\":\"https://idempo.dev/problems/store-unavailable\"");
		}
		finally {
			this.store.setDown(false);
		}
		assertThat(this.executions.count("orders")).isEqualTo(before);
	}

	/**
	 * WebFlux rejects an unreadable body while it resolves the handler's arguments,
	 * before the handler runs: nothing is stored, so the corrected request with the same
	 * key runs.
	 */
	@Test
	void requestRejectedBeforeTheHandlerReleasesTheKey() {
		String key = TestHttp.newKey();
		int before = this.executions.count("orders");
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> rejected = this.http.postWithKey(path("/orders"), key, "{\"item\":");
			assertThat(rejected.statusCode()).isEqualTo(400);
			assertThat(rejected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		HttpResponse<byte[]> corrected = this.http.postWithKey(path("/orders"), key,
				"{\"item\":\"cup\",\"quantity\":1}");
		assertThat(corrected.statusCode()).isEqualTo(201);
		assertThat(corrected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("orders")).isEqualTo(before + 1);
	}

	/**
	 * The client goes away while the handler runs: its key is released, so a retry runs
	 * the handler instead of meeting its own key in progress.
	 */
	@Test
	void clientThatGoesAwayReleasesItsKey() throws Exception {
		String key = TestHttp.newKey();
		int before = this.executions.count("slow");
		this.executions.holdHandlers();
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.getOutputStream()
				.write(("POST /t/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: " + key
						+ "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
					.getBytes(StandardCharsets.US_ASCII));
			socket.getOutputStream().flush();
			assertThat(this.executions.awaitEntered()).isTrue();
		}
		try {
			// the held handler must not finish before the server saw the client go
			assertThat(awaitFree(StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, key))).isTrue();
		}
		finally {
			this.executions.releaseHandlers();
		}
		// the retry runs the handler: neither 409 nor a replay (whether the abandoned
		// handler's own work stops is the server's affair, not idempo's)
		HttpResponse<byte[]> retry = this.http.postWithKey(path("/slow"), key, "{}");
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("slow")).isGreaterThan(before);
	}

	/**
	 * A {@code Flux} of a JSON body is written as one JSON array, stored, and replayed
	 * byte for byte.
	 */
	@Test
	void fluxOfAJsonBodyIsStoredAsOneArrayAndReplayed() {
		assertReplayedByteExact("/b/list", "list");
	}

	@Test
	void plainValueIsStoredAndReplayed() {
		assertReplayedByteExact("/b/plain", "plain");
	}

	@Test
	void ndjsonStreamIsNotStored() {
		assertRunsEveryTime("/b/ndjson", "ndjson", 200, "application/x-ndjson");
	}

	@Test
	void responseLargerThanMaxResponseSizeIsNotStored() {
		assertRunsEveryTime("/b/large", "large", 200, "text/plain");
	}

	/**
	 * A body larger than {@code idempo.max-request-size} (10 MB) is refused with 413
	 * before the handler runs; one byte less runs it.
	 */
	@Test
	void bodyLargerThanMaxRequestSizeIs413() {
		int before = this.executions.count("echo");
		int max = 10 * 1024 * 1024;
		HttpResponse<byte[]> refused = this.http.postWithKey("/b/echo", TestHttp.newKey(), "x".repeat(max + 1));
		assertThat(refused.statusCode()).isEqualTo(413);
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(refused)).contains("\"type\":\"https://idempo.dev/problems/request-too-large\"");
		assertThat(this.executions.count("echo")).isEqualTo(before);
		HttpResponse<byte[]> accepted = this.http.postWithKey("/b/echo", TestHttp.newKey(), "x".repeat(max));
		assertThat(accepted.statusCode()).isEqualTo(200);
		assertThat(TestHttp.text(accepted)).endsWith(":" + max);
		assertThat(this.executions.count("echo")).isEqualTo(before + 1);
	}

	private void assertReplayedByteExact(String path, String name) {
		String key = TestHttp.newKey();
		int before = this.executions.count(name);
		HttpResponse<byte[]> first = this.http.postWithKey(path, key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey(path, key, "{}");
		assertThat(first.statusCode()).as(TestHttp.text(first)).isEqualTo(200);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count(name)).isEqualTo(before + 1);
	}

	private void assertRunsEveryTime(String path, String name, int status, String contentType) {
		String key = TestHttp.newKey();
		int before = this.executions.count(name);
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> response = this.http.postWithKey(path, key, "{}");
			assertThat(response.statusCode()).isEqualTo(status);
			assertThat(response.headers().firstValue("Content-Type"))
				.hasValueSatisfying((value) -> assertThat(value).startsWith(contentType));
			assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		assertThat(this.executions.count(name)).isEqualTo(before + 2);
	}

	/** Polls the store until the key can be claimed, and frees it again. */
	private boolean awaitFree(String storageKey) {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (System.nanoTime() < deadline) {
			ClaimResult claim = this.store.claim(storageKey, Duration.ofSeconds(30)).block(Duration.ofSeconds(10));
			if (claim instanceof ClaimResult.Acquired acquired) {
				this.store.release(acquired.lease()).block(Duration.ofSeconds(10));
				return true;
			}
		}
		return false;
	}

	private void assertRunsEveryTime(String endpoint, String name, int status) {
		String key = TestHttp.newKey();
		int before = this.executions.count(name);
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> response = this.http.postWithKey(path(endpoint), key, "{}");
			assertThat(response.statusCode()).as(TestHttp.text(response)).isEqualTo(status);
			assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		assertThat(this.executions.count(name)).isEqualTo(before + 2);
	}

}
