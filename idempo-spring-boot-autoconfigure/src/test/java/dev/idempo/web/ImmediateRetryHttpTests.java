package dev.idempo.web;

import java.net.http.HttpResponse;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.idempo.store.LockingStore;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A response that is not stored releases its key before the client receives its end: a
 * client that retries the moment it has read the whole response runs the handler again
 * and never meets its own key in progress (409). Releases go through a
 * {@link DelayedReleaseStore}, so that a release that is not complete when the end
 * reaches the client is always caught, whatever the load. Each store has a subclass that
 * points the application at it.
 *
 * @author idempo
 */
@SpringBootTest(classes = { HttpTestApplication.class, ImmediateRetryHttpTests.DelayedReleases.class },
		webEnvironment = WebEnvironment.RANDOM_PORT)
public abstract class ImmediateRetryHttpTests {

	/** One byte over {@code idempo.max-response-size}, whose default is 1 MiB. */
	private static final int TOO_LARGE = 1024 * 1024 + 1;

	/**
	 * Twice per outcome: the delayed release makes one iteration decide already (a
	 * release that waits for the client's end is always met by the retry's claim), and
	 * each iteration costs every release {@link DelayedReleaseStore#MAX_WAIT} once fixed.
	 */
	private static final int ITERATIONS = 2;

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	TestHttp http;

	@BeforeEach
	void setUpClient() {
		this.http = new TestHttp(this.port);
	}

	/**
	 * Sends a retry on a connection of its own: on the first one's connection a retry
	 * would wait until the server has finished with the first request, since HTTP/1.1
	 * answers the requests of one connection in turn, whereas the retries of a real
	 * client under load, or of another instance of it, arrive on another connection. A
	 * new client per retry, so that no retry is sent on a pooled connection the server
	 * may be closing as it is reused (the JDK's client does not resend a {@code POST}
	 * that met a closed connection).
	 */
	private HttpResponse<byte[]> retry(String path, String key, String body) {
		return new TestHttp(this.port).postWithKey(path, key, body);
	}

	static Stream<Arguments> notStored() {
		String order = "{\"item\":\"book\",\"quantity\":2}";
		return Stream.of(Arguments.of("larger than the limit", "/t/bytes?size=" + TOO_LARGE, order, "bytes", 200),
				Arguments.of("outgrowing the limit while written", "/t/large-list?items=20000", order, "large-list",
						200),
				Arguments.of("larger than the limit, asynchronous", "/t/callable-bytes?size=" + TOO_LARGE, order,
						"callable-bytes", 200),
				Arguments.of("500", "/t/status/500", order, "status-500", 500),
				Arguments.of("429", "/t/status/429", order, "status-429", 429),
				Arguments.of("cacheResponse = false", "/t/no-cache", order, "no-cache", 200),
				Arguments.of("cacheResponse = false, declared length", "/t/no-cache-text", order, "no-cache-text", 200),
				Arguments.of("cacheResponse = false, closing its stream", "/t/no-cache-closed", order,
						"no-cache-closed", 200),
				Arguments.of("StreamingResponseBody", "/t/stream", order, "stream", 200),
				Arguments.of("StreamingResponseBody, declared length", "/t/sized-stream", order, "sized-stream", 200),
				Arguments.of("StreamingResponseBody, closing its stream", "/t/closed-stream", order, "closed-stream",
						200),
				Arguments.of("SseEmitter", "/t/sse", order, "sse", 200),
				Arguments.of("rejected before the handler", "/t/orders", "{\"item\":", "orders", 400));
	}

	/**
	 * The whole response is read before the retry is sent; the retry is answered afresh,
	 * as the first was, and runs the handler again if the first ran it.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("notStored")
	void retrySentWhenTheResponseHasArrivedRunsAgain(String name, String path, String body, String endpoint,
			int status) {
		int perRequest = (status == 400) ? 0 : 1;
		for (int i = 1; i <= ITERATIONS; i++) {
			String key = TestHttp.newKey();
			int before = this.executions.count(endpoint);
			HttpResponse<byte[]> first = this.http.postWithKey(path, key, body);
			HttpResponse<byte[]> retry = retry(path, key, body);
			assertThat(first.statusCode()).as("iteration %d, first", i).isEqualTo(status);
			assertThat(retry.statusCode()).as("iteration %d, retry: %s", i, TestHttp.text(retry)).isEqualTo(status);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(this.executions.count(endpoint)).as("iteration %d", i).isEqualTo(before + 2 * perRequest);
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class DelayedReleases {

		@Bean
		static BeanPostProcessor delayedReleaseStore() {
			return new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					return (bean instanceof LockingStore store) ? new DelayedReleaseStore(store) : bean;
				}

			};
		}

	}

}
