package dev.idempo.web;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.idempo.store.LockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.testsupport.MutableClock;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every client-visible behaviour of the request flow, over real HTTP, on the in-memory
 * store (with a clock the test controls).
 *
 * @author idempo
 */
@SpringBootTest(classes = { HttpTestApplication.class, IdempotencyFlowHttpTests.StoreConfiguration.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempo.max-response-size=64KB", "management.endpoints.web.exposure.include=metrics" })
class IdempotencyFlowHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@Autowired
	SwitchableStore store;

	@Autowired
	MutableClock clock;

	@Autowired
	MeterRegistry meterRegistry;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = new TestHttp(this.port);
	}

	@AfterEach
	void tearDown() {
		this.store.setDown(false);
		this.executions.releaseHandlers();
	}

	static Stream<Arguments> handlerStyles() {
		return Stream.of(Arguments.of("/t/object", "object", 200), Arguments.of("/t/orders", "orders", 201),
				Arguments.of("/t/entity-without-body", "entity-without-body", 202),
				Arguments.of("/t/void", "void", 201), Arguments.of("/t/string", "string", 200),
				Arguments.of("/t/bytes?size=4096", "bytes", 200),
				Arguments.of("/t/large-list?items=100", "large-list", 200), Arguments.of("/t/problem", "problem", 409),
				Arguments.of("/t/callable", "callable", 200), Arguments.of("/t/deferred", "deferred", 200),
				Arguments.of("/t/future", "future", 201), Arguments.of("/t/redirect", "redirect", 302),
				Arguments.of("/t/status/404", "status-404", 404), Arguments.of("/t/status/422", "status-422", 422));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("handlerStyles")
	void everyHandlerStyleIsReplayedByteForByte(String path, String endpoint, int status) {
		String key = TestHttp.newKey();
		String body = "{\"item\":\"pen\",\"quantity\":1}";
		int before = this.executions.count(endpoint);
		HttpResponse<byte[]> first = this.http.postWithKey(path, key, body);
		HttpResponse<byte[]> replay = this.http.postWithKey(path, key, body);
		assertThat(first.statusCode()).isEqualTo(status);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(replay.statusCode()).isEqualTo(status);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		for (String header : List.of("content-type", "location", "x-execution", "x-order-execution",
				"content-length")) {
			assertThat(replay.headers().allValues(header)).as(header).isEqualTo(first.headers().allValues(header));
		}
		assertThat(this.executions.count(endpoint)).isEqualTo(before + 1);
	}

	@Test
	void setCookieAndDateAreNotReplayedButOtherHeadersAre() {
		String key = TestHttp.newKey();
		String body = "{\"item\":\"pen\",\"quantity\":1}";
		HttpResponse<byte[]> first = this.http.postWithKey("/t/orders", key, body);
		HttpResponse<byte[]> replay = this.http.postWithKey("/t/orders", key, body);
		assertThat(first.headers().firstValue("Set-Cookie")).isPresent();
		assertThat(replay.headers().firstValue("Set-Cookie")).isEmpty();
		assertThat(replay.headers().firstValue("X-Order-Execution"))
			.isEqualTo(first.headers().firstValue("X-Order-Execution"));
		assertThat(replay.headers().firstValueAsLong("Content-Length")).hasValue(replay.body().length);
	}

	@Test
	void safeMethodsPassThroughEvenWithAKey() {
		String key = TestHttp.newKey();
		int before = this.executions.count("list");
		HttpResponse<byte[]> first = this.http
			.send(this.http.request("GET", "/t/orders", null, "Idempotency-Key", key));
		HttpResponse<byte[]> second = this.http
			.send(this.http.request("GET", "/t/orders", null, "Idempotency-Key", key));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("list")).isEqualTo(before + 2);
	}

	@Test
	void requestWithoutKeyRunsUnprotected() {
		int before = this.executions.count("object");
		assertThat(this.http.post("/t/object", "{}").statusCode()).isEqualTo(200);
		assertThat(this.http.post("/t/object", "{}").headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("object")).isEqualTo(before + 2);
	}

	@Test
	void requiredKeyMissingIs400() {
		int before = this.executions.count("required");
		HttpResponse<byte[]> response = this.http.post("/t/required", "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(response)).contains("\"type\":\"https://idempo.dev/problems/missing-key\"")
			.contains("\"status\":400")
			.contains("\"title\":")
			.contains("\"instance\":\"/t/required\"");
		assertThat(this.executions.count("required")).isEqualTo(before);
		assertThat(this.http.postWithKey("/t/required", TestHttp.newKey(), "{}").statusCode()).isEqualTo(200);
	}

	@Test
	void classLevelAnnotationAppliesAndMethodLevelWins() {
		assertThat(this.http.post("/class-level/inherits", "{}").statusCode()).isEqualTo(400);
		String key = TestHttp.newKey();
		this.http.postWithKey("/class-level/inherits", key, "{}");
		assertThat(
				this.http.postWithKey("/class-level/inherits", key, "{}").headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
		// the method's own @Idempotent(cacheResponse = false) replaces the class's
		// entirely
		int before = this.executions.count("class-overrides");
		assertThat(this.http.post("/class-level/overrides", "{}").statusCode()).isEqualTo(200);
		String other = TestHttp.newKey();
		this.http.postWithKey("/class-level/overrides", other, "{}");
		assertThat(this.http.postWithKey("/class-level/overrides", other, "{}")
			.headers()
			.firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("class-overrides")).isEqualTo(before + 3);
	}

	@ParameterizedTest
	@ValueSource(strings = { "Idempotency-Key:", "Idempotency-Key: \"\"", "Idempotency-Key: \"abc",
			"Idempotency-Key: \"a\\qb\"", "Idempotency-Key: \"abc\"x", "Idempotency-Key: caf\u00e9",
			"Idempotency-Key: \"caf\u00e9\"", "Idempotency-Key: \"tab\there\"" })
	void badKeysAre400(String headerLine) {
		int before = this.executions.count("object");
		String response = RawHttp.post(this.port, "/t/object", headerLine);
		assertThat(RawHttp.status(response)).as(response).isEqualTo(400);
		assertThat(response).contains("application/problem+json").contains("https://idempo.dev/problems/invalid-key");
		assertThat(this.executions.count("object")).isEqualTo(before);
	}

	@Test
	void controlCharactersInTheKeyAre400() {
		// Tomcat itself refuses most control characters in header values, before idempo
		assertThat(RawHttp.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: a\u0001b"))).isEqualTo(400);
	}

	@Test
	void tooLongKeyIs400AndLongestAllowedKeyWorks() {
		assertThat(RawHttp.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: " + "k".repeat(256))))
			.isEqualTo(400);
		assertThat(RawHttp.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: \"" + "k".repeat(256) + "\"")))
			.isEqualTo(400);
		String longest = "x" + TestHttp.newKey() + "k".repeat(255 - 37);
		assertThat(RawHttp.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: " + longest))).isEqualTo(200);
		String replay = RawHttp.post(this.port, "/t/object", "Idempotency-Key: " + longest);
		assertThat(replay).contains("Idempotent-Replayed: true");
	}

	@Test
	void moreThanOneKeyHeaderIs400() {
		String key = TestHttp.newKey();
		assertThat(RawHttp
			.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: " + key, "Idempotency-Key: " + key)))
			.isEqualTo(400);
		assertThat(RawHttp
			.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: " + key, "X-Idempotency-Key: " + key)))
			.isEqualTo(400);
	}

	@Test
	void structuredFieldStringAndBareTokenAreTheSameKey() {
		String key = TestHttp.newKey();
		assertThat(RawHttp.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: \"" + key + "\"")))
			.isEqualTo(200);
		assertThat(RawHttp.post(this.port, "/t/object", "Idempotency-Key: " + key))
			.contains("Idempotent-Replayed: true");
		assertThat(RawHttp.post(this.port, "/t/object", "Idempotency-Key: \"" + key + "\";ignored=1"))
			.contains("Idempotent-Replayed: true");
		assertThat(RawHttp.post(this.port, "/t/object", "X-Idempotency-Key: " + key))
			.contains("Idempotent-Replayed: true");
		String escaped = "a\\c-" + key;
		assertThat(RawHttp.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: \"a\\\\c-" + key + "\"")))
			.isEqualTo(200);
		assertThat(RawHttp.post(this.port, "/t/object", "Idempotency-Key: " + escaped))
			.contains("Idempotent-Replayed: true");
		assertThat(RawHttp.status(RawHttp.post(this.port, "/t/object", "Idempotency-Key: a\"b"))).isEqualTo(400);
	}

	@Test
	void sameKeyOnAnotherEndpointOrQueryIs422() {
		String key = TestHttp.newKey();
		this.http.postWithKey("/t/object?page=1", key, "{}");
		int before = this.executions.count("object") + this.executions.count("string");
		assertThat(this.http.postWithKey("/t/object?page=2", key, "{}").statusCode()).isEqualTo(422);
		assertThat(this.http.postWithKey("/t/string", key, "{}").statusCode()).isEqualTo(422);
		assertThat(
				this.http.send(this.http.request("PUT", "/t/object?page=1", "{}", "Idempotency-Key", key)).statusCode())
			.isIn(405, 422);
		assertThat(this.executions.count("object") + this.executions.count("string")).isEqualTo(before);
	}

	@Test
	void formPostsAreFingerprintedByTheirParameters() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.send(this.http
			.request("POST", "/t/form", null, "Idempotency-Key", key, "Content-Type",
					"application/x-www-form-urlencoded")
			.POST(java.net.http.HttpRequest.BodyPublishers.ofString("amount=10")));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(TestHttp.text(first)).contains("\"amount\":\"10\"");
		HttpResponse<byte[]> replay = this.http.send(this.http
			.request("POST", "/t/form", null, "Idempotency-Key", key, "Content-Type",
					"application/x-www-form-urlencoded")
			.POST(java.net.http.HttpRequest.BodyPublishers.ofString("amount=10")));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		HttpResponse<byte[]> other = this.http.send(this.http
			.request("POST", "/t/form", null, "Idempotency-Key", key, "Content-Type",
					"application/x-www-form-urlencoded")
			.POST(java.net.http.HttpRequest.BodyPublishers.ofString("amount=11")));
		assertThat(other.statusCode()).isEqualTo(422);
	}

	@Test
	void callersNeverSeeEachOthersRecords() {
		String key = TestHttp.newKey();
		String body = "{\"item\":\"pen\",\"quantity\":1}";
		int before = this.executions.count("orders");
		HttpResponse<byte[]> alice = this.http.send(this.http.request("POST", "/t/orders", body, "Idempotency-Key", key,
				"Authorization", TestHttp.basic("alice")));
		HttpResponse<byte[]> bob = this.http.send(this.http.request("POST", "/t/orders", body, "Idempotency-Key", key,
				"Authorization", TestHttp.basic("bob")));
		HttpResponse<byte[]> anonymous = this.http.postWithKey("/t/orders", key, body);
		HttpResponse<byte[]> aliceAgain = this.http.send(this.http.request("POST", "/t/orders", body, "Idempotency-Key",
				key, "Authorization", TestHttp.basic("alice")));
		assertThat(List.of(alice, bob, anonymous)).allSatisfy((response) -> {
			assertThat(response.statusCode()).isEqualTo(201);
			assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
		});
		assertThat(aliceAgain.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(aliceAgain.body()).isEqualTo(alice.body());
		assertThat(this.executions.count("orders")).isEqualTo(before + 3);
	}

	@Test
	void bearerTokensScopeRecordsWithoutSecurityPrincipal() {
		String key = TestHttp.newKey();
		int before = this.executions.count("object");
		this.http
			.send(this.http.request("POST", "/t/object", "{}", "Idempotency-Key", key, "Authorization", "Bearer one"));
		this.http
			.send(this.http.request("POST", "/t/object", "{}", "Idempotency-Key", key, "Authorization", "Bearer two"));
		HttpResponse<byte[]> again = this.http
			.send(this.http.request("POST", "/t/object", "{}", "Idempotency-Key", key, "Authorization", "Bearer one"));
		assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("object")).isEqualTo(before + 2);
	}

	@ParameterizedTest
	@ValueSource(ints = { 500, 503, 408, 425, 429 })
	void transientAndServerErrorStatusesAreNotStored(int status) {
		String key = TestHttp.newKey();
		int before = this.executions.count("status-" + status);
		assertThat(this.http.postWithKey("/t/status/" + status, key, "{}").statusCode()).isEqualTo(status);
		HttpResponse<byte[]> retry = this.http.postWithKey("/t/status/" + status, key, "{}");
		assertThat(retry.statusCode()).isEqualTo(status);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("status-" + status)).isEqualTo(before + 2);
	}

	@Test
	void exceptionEscapingTheHandlerStoresNothingAndReleasesTheKey() {
		String key = TestHttp.newKey();
		int before = this.executions.count("throw");
		assertThat(this.http.postWithKey("/t/throw", key, "{}").statusCode()).isEqualTo(500);
		assertThat(this.http.postWithKey("/t/throw", key, "{}").statusCode()).isEqualTo(500);
		assertThat(this.executions.count("throw")).isEqualTo(before + 2);
	}

	@Test
	void errorPageRenderedByTheContainerAfterSendErrorIsStoredAndReplayed() {
		String key = TestHttp.newKey();
		int before = this.executions.count("response-status-exception");
		HttpResponse<byte[]> first = this.http.postWithKey("/t/response-status-exception", key, "{}");
		HttpResponse<byte[]> replay = this.http.postWithKey("/t/response-status-exception", key, "{}");
		assertThat(first.statusCode()).isEqualTo(404);
		assertThat(TestHttp.text(first)).contains("/t/response-status-exception");
		assertThat(replay.statusCode()).isEqualTo(404);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(this.executions.count("response-status-exception")).isEqualTo(before + 1);
	}

	@Test
	void serverErrorRenderedByTheContainerIsNotStored() {
		String key = TestHttp.newKey();
		int before = this.executions.count("send-error-500");
		assertThat(this.http.postWithKey("/t/send-error-500", key, "{}").statusCode()).isEqualTo(500);
		assertThat(this.http.postWithKey("/t/send-error-500", key, "{}").statusCode()).isEqualTo(500);
		assertThat(this.executions.count("send-error-500")).isEqualTo(before + 2);
	}

	@Test
	void responseLargerThanTheLimitIsSentWholeButNotStored() {
		String key = TestHttp.newKey();
		int before = this.executions.count("bytes");
		HttpResponse<byte[]> first = this.http.postWithKey("/t/bytes?size=100000", key, "{}");
		HttpResponse<byte[]> second = this.http.postWithKey("/t/bytes?size=100000", key, "{}");
		assertThat(first.body()).hasSize(100000);
		assertThat(second.body()).hasSize(100000);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("bytes")).isEqualTo(before + 2);
	}

	@Test
	void responseOutgrowingTheLimitWhileWrittenIsSentWholeButNotStored() {
		String key = TestHttp.newKey();
		int before = this.executions.count("large-list");
		HttpResponse<byte[]> first = this.http.postWithKey("/t/large-list?items=2000", key, "{}");
		assertThat(first.body().length).isGreaterThan(64 * 1024);
		assertThat(TestHttp.text(first)).startsWith("[\"item-0").endsWith("\"]");
		HttpResponse<byte[]> second = this.http.postWithKey("/t/large-list?items=2000", key, "{}");
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("large-list")).isEqualTo(before + 2);
	}

	@ParameterizedTest
	@ValueSource(strings = { "stream", "sse" })
	void streamingResponsesAreNotStored(String endpoint) {
		String key = TestHttp.newKey();
		int before = this.executions.count(endpoint);
		HttpResponse<byte[]> first = this.http.postWithKey("/t/" + endpoint, key, "{}");
		HttpResponse<byte[]> second = this.http.postWithKey("/t/" + endpoint, key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(TestHttp.text(first)).contains("execution " + (before + 1));
		assertThat(TestHttp.text(second)).contains("execution " + (before + 2));
		assertThat(this.executions.count(endpoint)).isEqualTo(before + 2);
	}

	@Test
	void cacheResponseFalseOnlyLocks() {
		String key = TestHttp.newKey();
		int before = this.executions.count("no-cache");
		this.http.postWithKey("/t/no-cache", key, "{}");
		HttpResponse<byte[]> second = this.http.postWithKey("/t/no-cache", key, "{}");
		assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("no-cache")).isEqualTo(before + 2);
	}

	@Test
	void storeOutageFailsClosedWith503AndTheHandlerDoesNotRun() {
		int before = this.executions.count("object");
		this.store.setDown(true);
		HttpResponse<byte[]> response = this.http.postWithKey("/t/object", TestHttp.newKey(), "{}");
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.headers().firstValue("Retry-After")).hasValue("5");
		assertThat(TestHttp.text(response)).contains("https://idempo.dev/problems/store-unavailable");
		assertThat(this.executions.count("object")).isEqualTo(before);
		assertThat(this.http.post("/t/object", "{}").statusCode()).isEqualTo(200);
		assertThat(counter("idempo.requests", "outcome", "store_error")).isPositive();
	}

	@Test
	void leaseLostWhileTheHandlerRunsIsNotStoredAndIsCounted() throws Exception {
		String key = TestHttp.newKey();
		double lost = counter("idempo.responses", "outcome", "lock_lost");
		this.executions.holdHandlers();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor.submit(() -> this.http.postWithKey("/t/slow", key, "{}"));
			assertThat(this.executions.awaitEntered()).isTrue();
			this.clock.advance(Duration.ofSeconds(31));
			this.executions.releaseHandlers();
			assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(counter("idempo.responses", "outcome", "lock_lost")).isEqualTo(lost + 1);
		HttpResponse<byte[]> retry = this.http.postWithKey("/t/slow", key, "{}");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
	}

	@Test
	void metricsAreExposedWithBoundedTags() {
		String key = TestHttp.newKey();
		this.http.postWithKey("/t/object", key, "{}");
		this.http.postWithKey("/t/object", key, "{}");
		this.http.postWithKey("/t/object", key, "{\"other\":1}");
		assertThat(counter("idempo.requests", "outcome", "executed")).isPositive();
		assertThat(counter("idempo.requests", "outcome", "replayed")).isPositive();
		assertThat(counter("idempo.requests", "outcome", "mismatch")).isPositive();
		assertThat(counter("idempo.responses", "outcome", "stored")).isPositive();
		assertThat(this.meterRegistry.find("idempo.store.operations")
			.tags("store", "memory", "operation", "claim", "result", "success")
			.timer()
			.count()).isPositive();
		this.http.postWithKey("/t/status/500", TestHttp.newKey(), "{}");
		assertThat(
				this.meterRegistry.find("idempo.responses").tags("outcome", "not_stored", "reason", "status").counter())
			.isNotNull();
		HttpResponse<byte[]> actuator = this.http
			.send(this.http.request("GET", "/actuator/metrics/idempo.requests", null));
		assertThat(actuator.statusCode()).isEqualTo(200);
		assertThat(TestHttp.text(actuator)).contains("\"outcome\"").contains("replayed").doesNotContain(key);
	}

	private double counter(String name, String tag, String value) {
		return this.meterRegistry.find(name).tag(tag, value).counters().stream().mapToDouble((c) -> c.count()).sum();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class StoreConfiguration {

		@Bean
		MutableClock clock() {
			return new MutableClock();
		}

		@Bean
		SwitchableStore idempotencyLockingStore(MutableClock clock) {
			LockingStore memory = new InMemoryLockingStore(clock, 10_000, 64 * 1024 * 1024);
			return new SwitchableStore(memory);
		}

	}

}
