package dev.idempo.web;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store-neutral request flow every web stack gives a client over real HTTP: replay
 * byte for byte, 422 for a reused key, 409 with {@code Retry-After} while the first
 * request runs, comma-combined keys refused, and exactly one execution under fifty
 * concurrent duplicates. Spring MVC's suite ({@link IdempotencyHttpContractTests}) and
 * WebFlux's ({@code dev.idempo.webflux.WebFluxHttpContractTests}) extend it, each with a
 * subclass per store; their applications serve the same endpoints ({@code /orders}
 * answering 201 with a {@code Location}, {@code /slow} held by {@link #executions()},
 * {@code /object}).
 *
 * @author idempo
 */
public abstract class RequestFlowHttpContract {

	@LocalServerPort
	protected int port;

	protected TestHttp http;

	@BeforeEach
	void setUpHttpClient() {
		this.http = new TestHttp(this.port);
	}

	/**
	 * The path of an endpoint of the application under test.
	 * @param endpoint the endpoint, such as {@code /orders}
	 * @return its path
	 */
	protected abstract String path(String endpoint);

	/**
	 * The application's handler executions.
	 * @return the executions
	 */
	protected abstract HandlerExecutions executions();

	@Test
	void retryReplaysTheFirstResponse() {
		String key = TestHttp.newKey();
		int before = executions().count("orders");
		HttpResponse<byte[]> first = this.http.postWithKey(path("/orders"), key, "{\"item\":\"book\",\"quantity\":2}");
		HttpResponse<byte[]> second = this.http.postWithKey(path("/orders"), key, "{\"item\":\"book\",\"quantity\":2}");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(second.statusCode()).isEqualTo(201);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(second.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(executions().count("orders")).isEqualTo(before + 1);
	}

	@Test
	void reuseWithAnotherBodyIs422AndDoesNotRunTheHandler() {
		String key = TestHttp.newKey();
		this.http.postWithKey(path("/orders"), key, "{\"item\":\"book\",\"quantity\":2}");
		int before = executions().count("orders");
		HttpResponse<byte[]> reused = this.http.postWithKey(path("/orders"), key, "{\"item\":\"book\",\"quantity\":3}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(reused)).contains("\"type\":\"https://idempo.dev/problems/key-reused\"");
		assertThat(executions().count("orders")).isEqualTo(before);
	}

	@Test
	void duplicateWhileTheFirstRunsIs409WithRetryAfter() throws Exception {
		String key = TestHttp.newKey();
		executions().holdHandlers();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor.submit(() -> this.http.postWithKey(path("/slow"), key, "{}"));
			assertThat(executions().awaitEntered()).isTrue();
			HttpResponse<byte[]> duplicate = this.http.postWithKey(path("/slow"), key, "{}");
			assertThat(duplicate.statusCode()).isEqualTo(409);
			assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
			assertThat(TestHttp.text(duplicate)).contains("https://idempo.dev/problems/request-in-progress");
			executions().releaseHandlers();
			HttpResponse<byte[]> original = first.get(30, TimeUnit.SECONDS);
			assertThat(original.statusCode()).isEqualTo(200);
			HttpResponse<byte[]> retry = this.http.postWithKey(path("/slow"), key, "{}");
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(retry.body()).isEqualTo(original.body());
		}
		finally {
			executions().releaseHandlers();
			executor.shutdownNow();
		}
	}

	/**
	 * Intermediaries may join repeated header lines with commas: a bare {@code a1, a2} is
	 * two keys (400, as two lines are), a quoted {@code "a1, a2"} one key.
	 */
	@Test
	void bareKeyWithACommaIsTwoKeysAndAQuotedOneIsOne() {
		String first = TestHttp.newKey();
		String second = TestHttp.newKey();
		int before = executions().count("object");
		for (String combined : List.of(first + ", " + second, first + "," + second)) {
			HttpResponse<byte[]> response = this.http.postWithKey(path("/object"), combined, "{}");
			assertThat(response.statusCode()).isEqualTo(400);
			assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(TestHttp.text(response)).contains("\"type\":\"https://idempo.dev/problems/invalid-key\"");
		}
		assertThat(executions().count("object")).isEqualTo(before);
		String quoted = "\"" + first + ", " + second + "\"";
		HttpResponse<byte[]> executed = this.http.postWithKey(path("/object"), quoted, "{}");
		assertThat(executed.statusCode()).isEqualTo(200);
		assertThat(executed.headers().firstValue("Idempotent-Replayed")).isEmpty();
		HttpResponse<byte[]> replayed = this.http.postWithKey(path("/object"), quoted, "{}");
		assertThat(replayed.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replayed.body()).isEqualTo(executed.body());
		// neither half is that key
		assertThat(this.http.postWithKey(path("/object"), first, "{}").headers().firstValue("Idempotent-Replayed"))
			.isEmpty();
		assertThat(executions().count("object")).isEqualTo(before + 2);
	}

	@Test
	void fiftyConcurrentDuplicatesRunTheHandlerExactlyOnce() throws Exception {
		int requests = 50;
		String key = TestHttp.newKey();
		String body = "{\"item\":\"race\",\"quantity\":1}";
		int before = executions().count("orders");
		ExecutorService executor = Executors.newFixedThreadPool(requests);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
			for (int i = 0; i < requests; i++) {
				futures.add(executor.submit(() -> {
					start.await();
					return this.http.postWithKey(path("/orders"), key, body);
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
			assertThat(executions().count("orders")).isEqualTo(before + 1);
		}
		finally {
			executor.shutdownNow();
		}
		HttpResponse<byte[]> after = this.http.postWithKey(path("/orders"), key, body);
		assertThat(after.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

}
