package dev.idempo.webflux;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.idempo.web.TestHttp;
import dev.idempo.webflux.testapp.WebFluxTestApplication;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A filter before idempo's that makes the body longer than its declared
 * {@code Content-Length} (as a decoding filter that leaves the header does), within
 * {@code idempo.max-request-size}. A streamed digest of the declared length and more
 * bytes would be a fingerprint that the same bytes held whole never get, and a chunked
 * retry of the same request a false 422: a body that runs past its declared length fails,
 * as one that ends short of it does, and nothing is stored.
 */
@SpringBootTest(
		classes = { WebFluxTestApplication.class, WebFluxStreamedBodyHttpContract.StreamedController.class,
				StreamedBodyLengthHttpTests.Inflating.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempo.store.type=memory" })
class StreamedBodyLengthHttpTests {

	@LocalServerPort
	int port;

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	/**
	 * The same request, sent again chunked, is never a 422: either the first was refused
	 * (its body ran past its declared length) and stored nothing, or its record matches.
	 */
	@Test
	void aBodyLongerThanDeclaredNeverMakesItsChunkedRetryA422() throws Exception {
		String key = TestHttp.newKey();
		byte[] body = WebFluxStreamedBodyHttpContract.body(10_000, 31);
		post(key, body, false);
		HttpResponse<String> chunkedRetry = post(key, body, true);
		assertThat(chunkedRetry.statusCode()).as(chunkedRetry.body()).isNotEqualTo(422);
	}

	private HttpResponse<String> post(String key, byte[] body, boolean chunked) throws Exception {
		HttpRequest.BodyPublisher publisher = chunked
				? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))
				: HttpRequest.BodyPublishers.ofByteArray(body);
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/streamed/upload"))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/octet-stream")
			.header("Idempotency-Key", key)
			.header("X-Inflate", "true")
			.POST(publisher)
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * Before idempo's filter: appends bytes to the body (a stand-in for a decoding
	 * filter), leaving the headers as sent.
	 */
	static final class Inflating implements WebFilter, Ordered {

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
			if (exchange.getRequest().getHeaders().getFirst("X-Inflate") == null) {
				return chain.filter(exchange);
			}
			ServerHttpRequest request = new ServerHttpRequestDecorator(exchange.getRequest()) {

				@Override
				public Flux<DataBuffer> getBody() {
					return super.getBody().concatWith(Mono.fromSupplier(() -> exchange.getResponse()
						.bufferFactory()
						.wrap("-appended".getBytes(java.nio.charset.StandardCharsets.UTF_8))));
				}

			};
			return chain.filter(exchange.mutate().request(request).build());
		}

	}

}
