package dev.idempo.web;

import java.net.http.HttpResponse;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.idempo.web.testapp.EdgeCaseController;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The corners of the servlet API: asynchronous timeouts, run-time streaming, partial
 * writes, bodies read before the fingerprint, filter headers.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.mvc.async.request-timeout=300ms", "idempo.max-request-size=1KB" })
class EdgeCasesHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@Autowired
	EdgeCaseController controller;

	@Test
	void timedOutCallableKeepsItsKeyUntilItsWorkEnds() throws Exception {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		this.controller.callableRelease = new CountDownLatch(1);
		this.controller.callableEnded = new CountDownLatch(1);
		HttpResponse<byte[]> first = http.postWithKey("/edge/slow-callable", key, "{}");
		assertThat(first.statusCode()).isEqualTo(503);
		// the Callable still runs: a retry must not run the handler alongside it
		HttpResponse<byte[]> retry = http.postWithKey("/edge/slow-callable", key, "{}");
		assertThat(retry.statusCode()).isEqualTo(409);
		assertThat(this.controller.maxRunning).hasValue(1);
		this.controller.callableRelease.countDown();
		assertThat(this.controller.callableEnded.await(30, TimeUnit.SECONDS)).isTrue();
		// once it has ended the key is free again (nothing was stored: the client saw a
		// 503)
		this.controller.callableRelease = new CountDownLatch(0);
		HttpResponse<byte[]> later;
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		do {
			later = http.postWithKey("/edge/slow-callable", key, "{}");
		}
		while (later.statusCode() == 409 && System.nanoTime() < deadline);
		assertThat(later.statusCode()).isEqualTo(200);
		assertThat(this.controller.maxRunning).hasValue(1);
	}

	@Test
	void monoIsStoredWhenItCompletes() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		int before = this.executions.count("mono");
		HttpResponse<byte[]> first = http.postWithKey("/edge/mono", key, "{}");
		HttpResponse<byte[]> replay = http.postWithKey("/edge/mono", key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(this.executions.count("mono")).isEqualTo(before + 1);
	}

	@Test
	void streamingIsRecognisedAtRunTime() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		int before = this.executions.count("object-sse");
		HttpResponse<byte[]> first = http.postWithKey("/edge/object-sse", key, "{}");
		HttpResponse<byte[]> second = http.postWithKey("/edge/object-sse", key, "{}");
		assertThat(TestHttp.text(first)).contains("data:event of execution " + (before + 1));
		assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(TestHttp.text(second)).contains("data:event of execution " + (before + 2));
	}

	@Test
	void partialBodyWrittenBeforeAnExceptionIsNotKept() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = http.postWithKey("/edge/partial-then-throw", key, "{}");
		assertThat(first.statusCode()).isEqualTo(409);
		assertThat(TestHttp.text(first)).isEqualTo("ERROR");
		HttpResponse<byte[]> replay = http.postWithKey("/edge/partial-then-throw", key, "{}");
		assertThat(TestHttp.text(replay)).isEqualTo("ERROR");
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

	@Test
	void bodyReadByAFilterBeforeTheFingerprintIsStillFingerprinted() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = http.postWithKey("/edge/signed", key, "{\"amount\":1}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(TestHttp.text(first)).contains("\"amount\":1");
		assertThat(http.postWithKey("/edge/signed", key, "{\"amount\":1}").headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
		assertThat(http.postWithKey("/edge/signed", key, "{\"amount\":2}").statusCode()).isEqualTo(422);
	}

	@Test
	void bodyLargerThanTheFingerprintLimitIs413() {
		TestHttp http = new TestHttp(this.port);
		int before = this.executions.count("object");
		HttpResponse<byte[]> response = http.postWithKey("/t/object", TestHttp.newKey(),
				"\"" + "x".repeat(2000) + "\"");
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(TestHttp.text(response)).contains("https://idempo.dev/problems/request-too-large");
		assertThat(this.executions.count("object")).isEqualTo(before);
		assertThat(http.post("/t/object", "\"" + "x".repeat(2000) + "\"").statusCode()).isEqualTo(200);
	}

	@Test
	void unprotectedResponsesAreLeftAsTheContainerWritesThem() {
		HttpResponse<byte[]> response = new TestHttp(this.port).post("/edge/writer", "{}");
		assertThat(TestHttp.text(response)).isEqualTo("hi");
		assertThat(response.headers().firstValue("Content-Length")).hasValue("2");
		assertThat(response.headers().firstValue("Transfer-Encoding")).isEmpty();
	}

	@Test
	void headersSetByFiltersBeforeTheHandlerAreNotReplayedOverFreshOnes() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = http.postWithKey("/t/object", key, "{}");
		HttpResponse<byte[]> replay = http.postWithKey("/t/object", key, "{}");
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(first.headers().firstValue("X-Request-Id")).isPresent();
		assertThat(replay.headers().firstValue("X-Request-Id")).isPresent()
			.isNotEqualTo(first.headers().firstValue("X-Request-Id"));
	}

}
