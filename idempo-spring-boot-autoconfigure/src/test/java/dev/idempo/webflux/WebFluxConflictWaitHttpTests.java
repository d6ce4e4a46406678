package dev.idempo.webflux;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.idempo.core.StorageKeys;
import dev.idempo.web.TestHttp;
import dev.idempo.webflux.testapp.ReactiveExecutions;
import dev.idempo.webflux.testapp.SwitchableReactiveStore;
import dev.idempo.webflux.testapp.WebFluxTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempo.conflict.wait-timeout} on WebFlux: a duplicate that meets its key in
 * progress claims again on timers (no thread waits; BlockHound is installed) until the
 * first request's response is stored, and gets it replayed instead of 409.
 *
 * @author idempo
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		"spring.main.web-application-type=reactive", "idempo.store.type=memory", "idempo.conflict.wait-timeout=20s" })
class WebFluxConflictWaitHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	ReactiveExecutions executions;

	@Autowired
	SwitchableReactiveStore store;

	@Test
	void duplicateWaitsForTheFirstRequestAndGetsItsResponse() throws Exception {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		String storageKey = StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, key);
		int before = this.executions.count("slow");
		this.executions.holdHandlers();
		try {
			CompletableFuture<HttpResponse<byte[]>> first = CompletableFuture
				.supplyAsync(() -> http.postWithKey("/t/slow", key, "{}"));
			assertThat(this.executions.awaitEntered()).isTrue();
			CompletableFuture<HttpResponse<byte[]>> duplicate = CompletableFuture
				.supplyAsync(() -> http.postWithKey("/t/slow", key, "{}"));
			// the duplicate has met the key in progress (without the wait it is answered
			// 409 now)
			long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
			while (this.store.inProgressAnswers(storageKey) < 2 && System.nanoTime() < deadline) {
				Thread.sleep(5);
			}
			assertThat(this.store.inProgressAnswers(storageKey)).isGreaterThanOrEqualTo(2);
			assertThat(duplicate).isNotDone();
			this.executions.releaseHandlers();
			HttpResponse<byte[]> original = first.get(30, TimeUnit.SECONDS);
			HttpResponse<byte[]> waited = duplicate.get(30, TimeUnit.SECONDS);
			assertThat(original.statusCode()).isEqualTo(200);
			assertThat(waited.statusCode()).as(TestHttp.text(waited)).isEqualTo(200);
			assertThat(waited.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(waited.body()).isEqualTo(original.body());
			assertThat(this.executions.count("slow")).isEqualTo(before + 1);
		}
		finally {
			this.executions.releaseHandlers();
		}
	}

}
