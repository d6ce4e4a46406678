package dev.idempo.web;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.stream.Stream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;
import dev.idempo.web.testapp.RoutedEndpoints;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP behaviour every store must give a client of Spring MVC: the store-neutral
 * request flow ({@link RequestFlowHttpContract}: replay, 409, 422, exactly one execution
 * under concurrent duplicates, comma-combined keys refused), and expiry and requests
 * rejected before the handler left unstored. Each store has a subclass that points the
 * application at it. Every test runs twice: against the {@code @Idempotent} handlers
 * under {@code /t}, and against the same endpoints under {@code /r}
 * ({@link RoutedEndpoints}: functional endpoints, and a handler method without the
 * annotation), which only {@code idempo.routes} protects.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "test.short-ttl=1s", "idempo.routes[0].path=/r/short-ttl",
				"idempo.routes[0].ttl=${test.short-ttl}", "idempo.routes[1].path=/r/**" })
@ParameterizedClass(name = "endpoints under {0}")
@ValueSource(strings = { "/t", "/r" })
public abstract class IdempotencyHttpContractTests extends RequestFlowHttpContract {

	/** Where the endpoints are: {@code /t} annotated, {@code /r} routed. */
	@Parameter
	String endpoints;

	@Autowired
	Executions executions;

	@Autowired
	MeterRegistry meterRegistry;

	static Stream<Arguments> rejectedBeforeTheHandler() {
		String order = "{\"item\":\"book\",\"quantity\":2}";
		return Stream.of(
				Arguments.of("unreadable body", "/orders", "{\"item\":", "application/json", 400, "/orders", order, 201,
						"orders"),
				Arguments.of("unsupported media type", "/orders", order, "text/plain", 415, "/orders", order, 201,
						"orders"),
				Arguments.of("failed conversion", "/large-list?items=many", "{}", "application/json", 400,
						"/large-list?items=2", "{}", 200, "large-list"),
				Arguments.of("missing parameter", "/large-list", "{}", "application/json", 400, "/large-list?items=2",
						"{}", 200, "large-list"),
				Arguments.of("failed @Valid", "/validated-orders", "{\"item\":\"\",\"quantity\":0}", "application/json",
						400, "/validated-orders", order, 201, "validated-orders"));
	}

	/**
	 * Spring MVC answers before the handler method began: nothing is stored and the key
	 * is released, so the same request is answered afresh (never replayed, never 409 or
	 * 422) and the corrected one with the same key runs the handler, once.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource
	void rejectedBeforeTheHandler(String name, String path, String body, String contentType, int status,
			String correctedPath, String correctedBody, int correctedStatus, String endpoint) {
		String key = TestHttp.newKey();
		int before = this.executions.count(endpoint);
		double releasedBefore = notStored("rejected_before_handler");
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> rejected = this.http
				.send(this.http.request("POST", path(path), body, "Idempotency-Key", key)
					.setHeader("Content-Type", contentType));
			assertThat(rejected.statusCode()).as("attempt %d: %s", i + 1, TestHttp.text(rejected)).isEqualTo(status);
			assertThat(rejected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		assertThat(this.executions.count(endpoint)).isEqualTo(before);
		assertThat(notStored("rejected_before_handler")).isEqualTo(releasedBefore + 2);
		HttpResponse<byte[]> corrected = this.http.postWithKey(path(correctedPath), key, correctedBody);
		assertThat(corrected.statusCode()).isEqualTo(correctedStatus);
		assertThat(corrected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count(endpoint)).isEqualTo(before + 1);
		HttpResponse<byte[]> retry = this.http.postWithKey(path(correctedPath), key, correctedBody);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(corrected.body());
		assertThat(this.executions.count(endpoint)).isEqualTo(before + 1);
	}

	/**
	 * A handler that ran and answered 4xx, through an {@code @ExceptionHandler} or by an
	 * exception that the container's error page renders: stored and replayed. Also when
	 * the handler threw an exception of a type that Spring MVC raises while it resolves
	 * arguments: the handler ran, so its answer is no rejection before the handler, and
	 * releasing its key would run it twice.
	 */
	@ParameterizedTest
	@CsvSource({ "/problem, problem, 409", "/response-status-exception, response-status-exception, 404",
			"/own-binding-failure, own-binding-failure, 400" })
	void clientErrorOfAHandlerThatRanIsStored(String path, String endpoint, int status) {
		String key = TestHttp.newKey();
		int before = this.executions.count(endpoint);
		HttpResponse<byte[]> first = this.http.postWithKey(path(path), key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey(path(path), key, "{}");
		assertThat(first.statusCode()).isEqualTo(status);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(status);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count(endpoint)).isEqualTo(before + 1);
	}

	/**
	 * An asynchronous handler whose {@code Callable} failed with a 4xx that the
	 * container's error page renders (its own client error, or an exception of a type
	 * Spring MVC raises while it resolves arguments): the handler ran, so its key is
	 * never released; the retry replays the status (Tomcat renders the page only after it
	 * has completed the request, so the page's body is not stored) and the handler runs
	 * once.
	 */
	@ParameterizedTest
	@CsvSource({ "/callable-own-binding-failure, callable-own-binding-failure, 400",
			"/callable-status-exception, callable-status-exception, 404" })
	void clientErrorOfAnAsynchronousHandlerThatRanIsStored(String path, String endpoint, int status) {
		String key = TestHttp.newKey();
		int before = this.executions.count(endpoint);
		HttpResponse<byte[]> first = this.http.postWithKey(path(path), key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey(path(path), key, "{}");
		assertThat(first.statusCode()).isEqualTo(status);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(status);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count(endpoint)).isEqualTo(before + 1);
	}

	@Override
	protected String path(String endpoint) {
		return this.endpoints + endpoint;
	}

	@Override
	protected HandlerExecutions executions() {
		return this.executions;
	}

	private double notStored(String reason) {
		Counter counter = this.meterRegistry.find("idempo.responses")
			.tags("outcome", "not_stored", "reason", reason)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void expiredRecordRunsTheHandlerAgain() throws Exception {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.postWithKey(path("/short-ttl"), key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(this.http.postWithKey(path("/short-ttl"), key, "{}").headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		HttpResponse<byte[]> later;
		do {
			Thread.sleep(100);
			later = this.http.postWithKey(path("/short-ttl"), key, "{}");
		}
		while (later.headers().firstValue("Idempotent-Replayed").isPresent() && System.nanoTime() < deadline);
		assertThat(later.statusCode()).isEqualTo(200);
		assertThat(later.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(later.body()).isNotEqualTo(first.body());
	}

}
