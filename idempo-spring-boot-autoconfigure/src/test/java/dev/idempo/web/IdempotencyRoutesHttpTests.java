package dev.idempo.web;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@code idempo.routes} entries are chosen: the first entry that matches (path and
 * method) applies, {@code @Idempotent} on a handler wins over every entry, only an
 * entry's methods take part (GET never does), and {@code required} and
 * {@code cache-response} act as the annotation's attributes. The request flow itself runs
 * against routes in {@link IdempotencyHttpContractTests}.
 *
 * @author idempo
 */
@SpringBootTest(classes = { HttpTestApplication.class, IdempotencyRoutesHttpTests.Endpoints.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempo.routes[0].path=/t/object", "idempo.routes[0].cache-response=false",
				"idempo.routes[1].path=/r/orders", "idempo.routes[1].required=true", "idempo.routes[2].path=/m/**",
				"idempo.routes[2].methods=put, DELETE", "idempo.routes[3].path=/n/**",
				"idempo.routes[3].cache-response=false", "idempo.routes[4].path=/r/**", "idempo.routes[5].path=/p/**",
				"idempo.routes[5].responses.stored=2xx, 5xx", "idempo.routes[5].fingerprint.ignored-fields=/timestamp",
				"idempo.routes[6].path=/q/**" })
class IdempotencyRoutesHttpTests {

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
	void theAnnotationWinsOverAnEntryThatMatchesItsHandler() {
		// entry 0 says cache-response=false; @Idempotent on /t/object stores
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.postWithKey("/t/object", key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/t/object", key, "{}");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
	}

	@Test
	void theFirstMatchingEntryApplies() {
		// /r/orders: entry 1 (required) before entry 4 (/r/**, not required)
		HttpResponse<byte[]> withoutKey = this.http.post("/r/orders", "{\"item\":\"book\",\"quantity\":1}");
		assertThat(withoutKey.statusCode()).isEqualTo(400);
		assertThat(TestHttp.text(withoutKey)).contains("https://idempo.dev/problems/missing-key");
		int before = this.executions.count("object");
		assertThat(this.http.post("/r/object", "{}").statusCode()).isEqualTo(200);
		assertThat(this.executions.count("object")).isEqualTo(before + 1);
	}

	@Test
	void onlyTheEntrysMethodsTakePart() {
		// entry 2 takes PUT and DELETE on /m/**: a POST there is not protected
		String key = TestHttp.newKey();
		assertRunsEveryTime("POST", "/m/things", key, "m-post");
		int putsBefore = this.executions.count("m-put");
		HttpResponse<byte[]> put = this.http.send(this.http.request("PUT", "/m/things", "{}", "Idempotency-Key", key));
		HttpResponse<byte[]> putAgain = this.http
			.send(this.http.request("PUT", "/m/things", "{}", "Idempotency-Key", key));
		assertThat(putAgain.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(putAgain.body()).isEqualTo(put.body());
		assertThat(this.executions.count("m-put")).isEqualTo(putsBefore + 1);
	}

	@Test
	void getRequestsPassThroughUntouchedOnARoute() {
		// entry 4 (/r/**) has the default methods; GET is never one of them
		assertRunsEveryTime("GET", "/r/things", TestHttp.newKey(), "r-get");
	}

	@Test
	void anEntryWithoutCacheResponseStoresNothing() {
		assertRunsEveryTime("POST", "/n/things", TestHttp.newKey(), "n-post");
	}

	@Test
	void anEntryStoresWhatItsOwnResponsesPolicyStores() {
		// entry 5 stores 5xx: the retry replays the 500; entry 6 follows idempo.responses
		String key = TestHttp.newKey();
		int before = this.executions.count("p-fail");
		HttpResponse<byte[]> first = this.http.postWithKey("/p/fail", key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/p/fail", key, "{}");
		assertThat(first.statusCode()).isEqualTo(500);
		assertThat(retry.statusCode()).isEqualTo(500);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count("p-fail")).isEqualTo(before + 1);
		String other = TestHttp.newKey();
		int otherBefore = this.executions.count("q-fail");
		assertThat(this.http.postWithKey("/q/fail", other, "{}").statusCode()).isEqualTo(500);
		HttpResponse<byte[]> rerun = this.http.postWithKey("/q/fail", other, "{}");
		assertThat(rerun.statusCode()).isEqualTo(500);
		assertThat(rerun.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("q-fail")).isEqualTo(otherBefore + 2);
	}

	@Test
	void anEntryFingerprintsAsItsOwnFingerprintSettingsSay() {
		// entry 5 ignores /timestamp; entry 6 fingerprints the body as sent
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.postWithKey("/p/things", key, "{\"a\":1,\"timestamp\":1}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/p/things", key, "{\"timestamp\":2, \"a\":1}");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.http.postWithKey("/p/things", key, "{\"a\":2,\"timestamp\":1}").statusCode()).isEqualTo(422);
		String other = TestHttp.newKey();
		this.http.postWithKey("/q/things", other, "{\"a\":1,\"timestamp\":1}");
		assertThat(this.http.postWithKey("/q/things", other, "{\"a\":1,\"timestamp\":2}").statusCode()).isEqualTo(422);
	}

	@Test
	void aFunctionalEndpointsServerSentEventsAreNotStored() {
		// entry 4 (/r/**): the events stream through, the key is released, the retry runs
		String key = TestHttp.newKey();
		int before = this.executions.count("r-sse");
		HttpResponse<byte[]> first = this.http.postWithKey("/r/sse", key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/r/sse", key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("text/event-stream"));
		assertThat(TestHttp.text(first)).contains("data:1");
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(TestHttp.text(retry)).contains("data:2");
		assertThat(this.executions.count("r-sse")).isEqualTo(before + 2);
	}

	@Test
	void anAnnotatedHandlersFiniteReplyIsStoredWhateverTypeTheClientAccepts() {
		// SPEC: streaming means StreamingResponseBody, SseEmitter, ResponseBodyEmitter; a
		// String handler answering Accept: text/event-stream returns one finite body
		String key = TestHttp.newKey();
		int before = this.executions.count("text");
		HttpResponse<byte[]> first = this.http
			.send(this.http.request("POST", "/t/text", "{}", "Idempotency-Key", key, "Accept", "text/event-stream"));
		HttpResponse<byte[]> retry = this.http
			.send(this.http.request("POST", "/t/text", "{}", "Idempotency-Key", key, "Accept", "text/event-stream"));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("text/event-stream"));
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count("text")).isEqualTo(before + 1);
	}

	/** Two requests with one key both run the handler: nothing protects them. */
	private void assertRunsEveryTime(String method, String path, String key, String endpoint) {
		int before = this.executions.count(endpoint);
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> response = this.http
				.send(this.http.request(method, path, method.equals("GET") ? null : "{}", "Idempotency-Key", key));
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		assertThat(this.executions.count(endpoint)).isEqualTo(before + 2);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Endpoints {

		@Bean
		RouterFunction<ServerResponse> routeSelectionEndpoints(Executions executions) {
			return RouterFunctions.route()
				.POST("/m/things", (request) -> count(executions, "m-post"))
				.PUT("/m/things", (request) -> count(executions, "m-put"))
				.GET("/r/things", (request) -> count(executions, "r-get"))
				.POST("/n/things", (request) -> count(executions, "n-post"))
				.POST("/p/things", (request) -> count(executions, "p-post"))
				.POST("/q/things", (request) -> count(executions, "q-post"))
				.POST("/r/sse", (request) -> ServerResponse.sse((sse) -> {
					try {
						sse.send(executions.increment("r-sse"));
						sse.complete();
					}
					catch (IOException ex) {
						sse.error(ex);
					}
				}))
				.POST("/p/fail", (request) -> fail(executions, "p-fail"))
				.POST("/q/fail", (request) -> fail(executions, "q-fail"))
				.build();
		}

		private static ServerResponse fail(Executions executions, String endpoint) {
			return ServerResponse.status(500).body(Map.of("execution", executions.increment(endpoint)));
		}

		private static ServerResponse count(Executions executions, String endpoint) {
			return ServerResponse.ok().body(Map.of("execution", executions.increment(endpoint)));
		}

	}

}
