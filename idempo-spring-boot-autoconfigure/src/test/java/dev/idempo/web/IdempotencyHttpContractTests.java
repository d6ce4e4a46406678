package dev.idempo.web;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP behaviour every store must give a client: replay, 409, 422, expiry and exactly
 * one execution under concurrent duplicates. Each store has a subclass that points the
 * application at it.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "test.short-ttl=1s" })
public abstract class IdempotencyHttpContractTests {

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	TestHttp http;

	@BeforeEach
	void setUpClient() {
		this.http = new TestHttp(this.port);
	}

	@Test
	void retryReplaysTheFirstResponse() {
		String key = TestHttp.newKey();
		int before = this.executions.count("orders");
		HttpResponse<byte[]> first = this.http.postWithKey("/t/orders", key, "{\"item\":\"book\",\"quantity\":2}");
		HttpResponse<byte[]> second = this.http.postWithKey("/t/orders", key, "{\"item\":\"book\",\"quantity\":2}");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(second.statusCode()).isEqualTo(201);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(second.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(this.executions.count("orders")).isEqualTo(before + 1);
	}

	@Test
	void reuseWithAnotherBodyIs422AndDoesNotRunTheHandler() {
		String key = TestHttp.newKey();
		this.http.postWithKey("/t/orders", key, "{\"item\":\"book\",\"quantity\":2}");
		int before = this.executions.count("orders");
		HttpResponse<byte[]> reused = this.http.postWithKey("/t/orders", key, "{\"item\":\"book\",\"quantity\":3}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(reused)).contains("\"type\":\"https://idempo.dev/problems/key-reused\"");
		assertThat(this.executions.count("orders")).isEqualTo(before);
	}

	@Test
	void duplicateWhileTheFirstRunsIs409WithRetryAfter() throws Exception {
		String key = TestHttp.newKey();
		this.executions.holdHandlers();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor.submit(() -> this.http.postWithKey("/t/slow", key, "{}"));
			assertThat(this.executions.awaitEntered()).isTrue();
			HttpResponse<byte[]> duplicate = this.http.postWithKey("/t/slow", key, "{}");
			assertThat(duplicate.statusCode()).isEqualTo(409);
			assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
			assertThat(TestHttp.text(duplicate)).contains("https://idempo.dev/problems/request-in-progress");
			this.executions.releaseHandlers();
			HttpResponse<byte[]> original = first.get(30, TimeUnit.SECONDS);
			assertThat(original.statusCode()).isEqualTo(200);
			HttpResponse<byte[]> retry = this.http.postWithKey("/t/slow", key, "{}");
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(retry.body()).isEqualTo(original.body());
		}
		finally {
			this.executions.releaseHandlers();
			executor.shutdownNow();
		}
	}

	@Test
	void expiredRecordRunsTheHandlerAgain() throws Exception {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.postWithKey("/t/short-ttl", key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(this.http.postWithKey("/t/short-ttl", key, "{}").headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		HttpResponse<byte[]> later;
		do {
			Thread.sleep(100);
			later = this.http.postWithKey("/t/short-ttl", key, "{}");
		}
		while (later.headers().firstValue("Idempotent-Replayed").isPresent() && System.nanoTime() < deadline);
		assertThat(later.statusCode()).isEqualTo(200);
		assertThat(later.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(later.body()).isNotEqualTo(first.body());
	}

	@Test
	void fiftyConcurrentDuplicatesRunTheHandlerExactlyOnce() throws Exception {
		int requests = 50;
		String key = TestHttp.newKey();
		String body = "{\"item\":\"race\",\"quantity\":1}";
		int before = this.executions.count("orders");
		ExecutorService executor = Executors.newFixedThreadPool(requests);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
			for (int i = 0; i < requests; i++) {
				futures.add(executor.submit(() -> {
					start.await();
					return this.http.postWithKey("/t/orders", key, body);
				}));
			}
			start.countDown();
			List<HttpResponse<byte[]>> executed = new ArrayList<>();
			List<HttpResponse<byte[]>> replayed = new ArrayList<>();
			int conflicts = 0;
			for (Future<HttpResponse<byte[]>> future : futures) {
				HttpResponse<byte[]> response = future.get(60, TimeUnit.SECONDS);
				if (response.statusCode() == 409) {
					conflicts++;
				}
				else {
					assertThat(response.statusCode()).isEqualTo(201);
					(response.headers().firstValue("Idempotent-Replayed").isPresent() ? replayed : executed)
						.add(response);
				}
			}
			assertThat(executed).hasSize(1);
			assertThat(replayed)
				.allSatisfy((response) -> assertThat(response.body()).isEqualTo(executed.get(0).body()));
			assertThat(executed.size() + replayed.size() + conflicts).isEqualTo(requests);
			assertThat(this.executions.count("orders")).isEqualTo(before + 1);
		}
		finally {
			executor.shutdownNow();
		}
		HttpResponse<byte[]> after = this.http.postWithKey("/t/orders", key, body);
		assertThat(after.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

}
