package dev.idempo.sample.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway route with the {@code Idempotency} filter and Spring Cloud Gateway's
 * {@code Retry} filter (retrying POST, as one would behind an idempotency key). The Retry
 * filter has the gateway cache the body ({@code AdaptCachedBodyGlobalFilter}) and
 * subscribes to the request body once per attempt; the backend answers 503 to the first
 * attempt of each payment and 201 to the next. The second attempt reaches the backend and
 * its 201 is stored and replayed: a body the gateway cached is read whole, never streamed
 * (a streamed body can be read once).
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.cloud.gateway.server.webflux.routes[0].id=retrying",
				"spring.cloud.gateway.server.webflux.routes[0].uri=${sample.backend}",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/retrying/**",
				"spring.cloud.gateway.server.webflux.routes[0].filters[0]=StripPrefix=1",
				"spring.cloud.gateway.server.webflux.routes[0].filters[1]=Idempotency=24h,false",
				"spring.cloud.gateway.server.webflux.routes[0].filters[2].name=Retry",
				"spring.cloud.gateway.server.webflux.routes[0].filters[2].args.retries=2",
				"spring.cloud.gateway.server.webflux.routes[0].filters[2].args.methods=POST",
				"spring.cloud.gateway.server.webflux.routes[0].filters[2].args.statuses=SERVICE_UNAVAILABLE",
				"spring.cloud.gateway.server.webflux.routes[1].id=early",
				"spring.cloud.gateway.server.webflux.routes[1].uri=${sample.backend}",
				"spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/early/**",
				"spring.cloud.gateway.server.webflux.routes[1].filters[0]=StripPrefix=1",
				"spring.cloud.gateway.server.webflux.routes[1].filters[1]=Idempotency=24h,false",
				"idempo.max-request-size=8MB" })
class GatewayRetryFilterTests {

	private static final FlakyBackend backend = FlakyBackend.start();

	private static final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void backend(DynamicPropertyRegistry registry) {
		registry.add("sample.backend", backend::url);
	}

	@AfterAll
	static void stopBackend() {
		backend.server().stop(0);
	}

	@Test
	void aRouteWithTheRetryFilterRetriesAKeyedPostAndReplaysItsAnswer() {
		String payment = UUID.randomUUID().toString();
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post(payment, key);
		assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
		assertThat(backend.attempts(payment)).isEqualTo(2);
		HttpResponse<String> retry = post(payment, key);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(backend.attempts(payment)).isEqualTo(2);
	}

	/**
	 * A backend that answers (a 4xx, stored) without reading a large body: the gateway
	 * still answers, stores the answer under the whole body's fingerprint, and replays
	 * it.
	 */
	@Test
	void aBackendThatAnswersBeforeReadingALargeBodyIsStoredAndReplayed() {
		String key = UUID.randomUUID().toString();
		byte[] body = new byte[4 * 1024 * 1024];
		java.util.Arrays.fill(body, (byte) 'x');
		HttpResponse<String> first = postBytes("/early/early", body, key);
		assertThat(first.statusCode()).as(first.body()).isEqualTo(400);
		HttpResponse<String> retry = postBytes("/early/early", body, key);
		assertThat(retry.statusCode()).isEqualTo(400);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
	}

	private HttpResponse<String> postBytes(String path, byte[] body, String key) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/octet-stream")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofByteArray(body))
			.build();
		try {
			return client.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private HttpResponse<String> post(String payment, String key) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/retrying/payments"))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"payment\":\"" + payment + "\"}"))
			.build();
		try {
			return client.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Answers 503 to a payment's first attempt, 201 to the next ones. */
	record FlakyBackend(HttpServer server, Map<String, AtomicInteger> attempts) {

		static FlakyBackend start() {
			try {
				HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
				FlakyBackend backend = new FlakyBackend(server, new ConcurrentHashMap<>());
				server.createContext("/payments", backend::handle);
				server.createContext("/early", FlakyBackend::early);
				server.start();
				return backend;
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		String url() {
			return "http://127.0.0.1:" + this.server.getAddress().getPort();
		}

		int attempts(String payment) {
			AtomicInteger attempts = this.attempts.get(payment);
			return (attempts != null) ? attempts.get() : 0;
		}

		private static void early(HttpExchange exchange) throws IOException {
			byte[] answer = ("{\"refused\":\"" + UUID.randomUUID() + "\"}").getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.sendResponseHeaders(400, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
		}

		private void handle(HttpExchange exchange) throws IOException {
			String body;
			try (InputStream in = exchange.getRequestBody()) {
				body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
			String payment = body.replaceAll(".*\"payment\":\"([^\"]+)\".*", "$1");
			int attempt = this.attempts.computeIfAbsent(payment, (k) -> new AtomicInteger()).incrementAndGet();
			byte[] answer = ("{\"payment\":\"" + payment + "\",\"id\":\"" + UUID.randomUUID() + "\",\"attempt\":"
					+ attempt + "}")
				.getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.sendResponseHeaders((attempt == 1) ? 503 : 201, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
		}

	}

}
