package dev.idempo.web;

import java.net.http.HttpResponse;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.web.rejections.RejectionsMvcApplication;
import dev.idempo.web.rejections.RejectionsMvcApplication.Charges;
import dev.idempo.web.rejections.RejectionsMvcApplication.RecordingListener;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key in progress or reused that a blocking {@code @Idempotent(key = ...)} method
 * meets, escaping a Spring MVC handler, is answered as the request flow answers its own
 * (409 with {@code Retry-After}, 422), over real HTTP on Tomcat; the application's
 * {@code @ExceptionHandler} wins.
 *
 * @author idempo
 */
@SpringBootTest(classes = RejectionsMvcApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempo.store.type=memory", "idempo.conflict.retry-after=7s" })
class MvcEscapedRejectionsHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	Charges charges;

	@Autowired
	RecordingListener listener;

	TestHttp http;

	@BeforeEach
	void client() {
		this.http = new TestHttp(this.port);
	}

	@Test
	void aMethodKeyInProgressIs409WithRetryAfterAndCountedOnceByTheMethod() throws Exception {
		String id = TestHttp.newKey();
		this.charges.hold();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor
				.submit(() -> this.http.post("/charges/" + id + "?amount=1", "{}"));
			assertThat(this.charges.awaitEntered()).isTrue();
			this.listener.outcomes().clear();
			HttpResponse<byte[]> duplicate = this.http.post("/charges/" + id + "?amount=1", "{}");
			assertThat(duplicate.statusCode()).isEqualTo(409);
			assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("7");
			assertThat(duplicate.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(TestHttp.text(duplicate))
				.startsWith("{\"type\":\"https://idempo.dev/problems/request-in-progress\","
						+ "\"title\":\"A request with this idempotency key is in progress\",\"status\":409,")
				.contains("\"instance\":\"/charges/" + id + "\"");
			// the method counted its rejection; the answer does not count it again
			assertThat(this.listener.outcomes()).filteredOn((outcome) -> outcome.endsWith(":conflict"))
				.containsExactly("method:conflict");
			this.charges.release();
			HttpResponse<byte[]> original = first.get(30, TimeUnit.SECONDS);
			assertThat(original.statusCode()).isEqualTo(200);
			assertThat(this.charges.runs(id)).isOne();
		}
		finally {
			this.charges.release();
			executor.shutdownNow();
		}
	}

	@Test
	void aMethodKeyReusedWithOtherArgumentsIs422() {
		String id = TestHttp.newKey();
		assertThat(this.http.post("/charges/" + id + "?amount=1", "{}").statusCode()).isEqualTo(200);
		HttpResponse<byte[]> reused = this.http.post("/charges/" + id + "?amount=10", "{}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Retry-After")).isEmpty();
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(reused)).contains("\"type\":\"https://idempo.dev/problems/key-reused\"")
			.contains("\"status\":422");
		assertThat(this.charges.runs(id)).isOne();
	}

	@Test
	void theApplicationsExceptionHandlerWins() throws Exception {
		String id = TestHttp.newKey();
		this.charges.hold();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor
				.submit(() -> this.http.post("/handled-charges/" + id + "?amount=1", "{}"));
			assertThat(this.charges.awaitEntered()).isTrue();
			HttpResponse<byte[]> duplicate = this.http.post("/handled-charges/" + id + "?amount=1", "{}");
			assertThat(duplicate.statusCode()).isEqualTo(503);
			assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("2");
			assertThat(TestHttp.text(duplicate)).contains("This charge is being processed; try again in a moment.")
				.doesNotContain("https://idempo.dev/problems/");
			this.charges.release();
			assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		finally {
			this.charges.release();
			executor.shutdownNow();
		}
	}

	/**
	 * An {@code @Idempotent} handler whose method met its key in progress: the 409 is not
	 * the handler's response to store; its key is released, and its retry runs it again.
	 */
	@Test
	void anIdempotentHandlerReleasesItsKeyWhenItsMethodMeetsItsKeyInProgress() throws Exception {
		String id = TestHttp.newKey();
		String requestKey = TestHttp.newKey();
		this.charges.hold();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor
				.submit(() -> this.http.post("/charges/" + id + "?amount=1", "{}"));
			assertThat(this.charges.awaitEntered()).isTrue();
			HttpResponse<byte[]> duplicate = this.http.post("/idempotent-charges/" + id + "?amount=1", "{}",
					"Idempotency-Key", requestKey);
			assertThat(duplicate.statusCode()).isEqualTo(409);
			assertThat(TestHttp.text(duplicate)).contains("https://idempo.dev/problems/request-in-progress");
			this.charges.release();
			HttpResponse<byte[]> original = first.get(30, TimeUnit.SECONDS);
			assertThat(original.statusCode()).isEqualTo(200);
			HttpResponse<byte[]> retry = this.http.post("/idempotent-charges/" + id + "?amount=1", "{}",
					"Idempotency-Key", requestKey);
			assertThat(retry.statusCode()).isEqualTo(200);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(retry.body()).isEqualTo(original.body());
			assertThat(this.charges.runs(id)).isOne();
		}
		finally {
			this.charges.release();
			executor.shutdownNow();
		}
	}

}
