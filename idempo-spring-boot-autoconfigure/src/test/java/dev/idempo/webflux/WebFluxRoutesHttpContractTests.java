package dev.idempo.webflux;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import dev.idempo.web.HandlerExecutions;
import dev.idempo.web.RequestFlowHttpContract;
import dev.idempo.web.TestHttp;
import dev.idempo.webflux.testapp.ReactiveExecutions;
import dev.idempo.webflux.testapp.RoutedReactiveEndpoints;
import dev.idempo.webflux.testapp.WebFluxTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempo.routes} in a WebFlux application, over real HTTP on Reactor Netty with
 * BlockHound installed: the store-neutral request flow ({@link RequestFlowHttpContract}:
 * byte-exact replay, 422, 409, comma-combined keys, fifty concurrent duplicates running
 * the handler once) against functional endpoints that carry no annotation
 * ({@link RoutedReactiveEndpoints} under {@code /r}, which the last entry protects), and
 * how entries are chosen: a required entry refuses a request without a key, a body the
 * endpoint cannot read leaves nothing stored, a path no entry matches runs every time, an
 * entry protects an annotated controller's handler method that carries no
 * {@code @Idempotent}, and {@code @Idempotent} wins over an entry. Each store has a
 * subclass that points the application at it.
 *
 * @author idempo
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempo.routes[0].path=/t/object",
				"idempo.routes[0].cache-response=false", "idempo.routes[1].path=/r/required",
				"idempo.routes[1].required=true", "idempo.routes[2].path=/t/unprotected",
				"idempo.routes[3].path=/r/**" })
abstract class WebFluxRoutesHttpContractTests extends RequestFlowHttpContract {

	@Autowired
	ReactiveExecutions executions;

	@Override
	protected String path(String endpoint) {
		return "/r" + endpoint;
	}

	@Override
	protected HandlerExecutions executions() {
		return this.executions;
	}

	@Test
	void missingKeyOnARequiredEntryIs400AndDoesNotRunTheHandler() {
		// /r/required: entry 1 (required) before entry 3 (/r/**, not required)
		int before = this.executions.count("r-required");
		HttpResponse<byte[]> response = this.http.post("/r/required", "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(response)).contains("\"type\":\"https://idempo.dev/problems/missing-key\"")
			.contains("\"instance\":\"/r/required\"");
		assertThat(this.executions.count("r-required")).isEqualTo(before);
		// a request with a key runs once and is replayed
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.postWithKey("/r/required", key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/r/required", key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count("r-required")).isEqualTo(before + 1);
	}

	@Test
	void aNotRequiredEntryLetsARequestWithoutAKeyThrough() {
		int before = this.executions.count("object");
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> response = this.http.post("/r/object", "{}");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		assertThat(this.executions.count("object")).isEqualTo(before + 2);
	}

	@Test
	void aFunctionalEndpointNoEntryMatchesRunsEveryTime() {
		assertRunsEveryTime("/x/things", "x-things");
	}

	/**
	 * A route with a path variable: the filter's own handler lookup leaves nothing in the
	 * exchange for the dispatcher's (a functional route combines its pattern with one
	 * already matched, and a variable captured twice fails the request with 500).
	 */
	@Test
	void aFunctionalEndpointWithAPathVariableIsProtected() {
		String key = TestHttp.newKey();
		int before = this.executions.count("deposits");
		HttpResponse<byte[]> first = this.http.postWithKey("/r/accounts/42/deposits", key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/r/accounts/42/deposits", key, "{}");
		assertThat(first.statusCode()).as(TestHttp.text(first)).isEqualTo(200);
		assertThat(TestHttp.text(first)).contains("\"account\":\"42\"");
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count("deposits")).isEqualTo(before + 1);
	}

	@Test
	void anUnprotectedFunctionalEndpointWithAPathVariableRunsEveryTime() {
		assertRunsEveryTime("/x/accounts/7", "x-accounts");
	}

	@Test
	void anEntryProtectsAHandlerMethodWithoutTheAnnotation() {
		// /t/unprotected: a @PostMapping method without @Idempotent, named by entry 2
		String key = TestHttp.newKey();
		int before = this.executions.count("unprotected");
		HttpResponse<byte[]> first = this.http.postWithKey("/t/unprotected", key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/t/unprotected", key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count("unprotected")).isEqualTo(before + 1);
	}

	@Test
	void theAnnotationWinsOverAnEntryThatMatchesItsHandler() {
		// entry 0 says cache-response=false for /t/object; its @Idempotent stores
		String key = TestHttp.newKey();
		int before = this.executions.count("object");
		HttpResponse<byte[]> first = this.http.postWithKey("/t/object", key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/t/object", key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count("object")).isEqualTo(before + 1);
	}

	/**
	 * A functional endpoint that cannot read its body fails before it has effects: the
	 * error escapes it, nothing is stored, and the corrected request with the same key
	 * runs.
	 */
	@Test
	void aBodyTheEndpointCannotReadReleasesTheKey() {
		String key = TestHttp.newKey();
		int before = this.executions.count("orders");
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> rejected = this.http.postWithKey("/r/orders", key, "{\"item\":");
			assertThat(rejected.statusCode()).isEqualTo(400);
			assertThat(rejected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		HttpResponse<byte[]> corrected = this.http.postWithKey("/r/orders", key, "{\"item\":\"cup\",\"quantity\":1}");
		assertThat(corrected.statusCode()).isEqualTo(201);
		assertThat(corrected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("orders")).isEqualTo(before + 1);
	}

	private void assertRunsEveryTime(String path, String endpoint) {
		String key = TestHttp.newKey();
		int before = this.executions.count(endpoint);
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> response = this.http.postWithKey(path, key, "{}");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		assertThat(this.executions.count(endpoint)).isEqualTo(before + 2);
	}

}
