package dev.idempo.web;

import java.net.http.HttpResponse;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The opt-in mode where a duplicate waits for the first request and gets its response.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "idempo.conflict.wait-timeout=20s")
class ConflictWaitHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@Test
	void duplicateWaitsForTheFirstRequestAndGetsItsResponse() throws Exception {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		this.executions.holdHandlers();
		ExecutorService executor = Executors.newFixedThreadPool(2);
		try {
			Future<HttpResponse<byte[]>> first = executor.submit(() -> http.postWithKey("/t/slow", key, "{}"));
			assertThat(this.executions.awaitEntered()).isTrue();
			Future<HttpResponse<byte[]>> duplicate = executor.submit(() -> http.postWithKey("/t/slow", key, "{}"));
			assertThat(duplicate.isDone()).isFalse();
			this.executions.releaseHandlers();
			HttpResponse<byte[]> original = first.get(30, TimeUnit.SECONDS);
			HttpResponse<byte[]> waited = duplicate.get(30, TimeUnit.SECONDS);
			assertThat(original.statusCode()).isEqualTo(200);
			assertThat(waited.statusCode()).isEqualTo(200);
			assertThat(waited.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(waited.body()).isEqualTo(original.body());
			assertThat(this.executions.count("slow")).isEqualTo(1);
		}
		finally {
			this.executions.releaseHandlers();
			executor.shutdownNow();
		}
	}

}
