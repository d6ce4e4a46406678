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
 * The sample gateway as its {@code application.yml} configures it, in front of a JDK
 * {@code HttpServer} that counts how often each payment reaches it: under {@code /api/} a
 * retry is replayed by the gateway, under {@code /direct/} it reaches the backend again.
 *
 * @author idempo
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class SampleGatewayApplicationTests {

	private static final Backend backend = Backend.start();

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
	void aRetryThroughTheProtectedRouteIsReplayedByTheGateway() {
		String payment = UUID.randomUUID().toString();
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post("/api/payments", payment, key);
		HttpResponse<String> retry = post("/api/payments", payment, key);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(backend.runs(payment)).isOne();
	}

	@Test
	void aRetryThroughTheUnprotectedRouteReachesTheBackendAgain() {
		String payment = UUID.randomUUID().toString();
		String key = UUID.randomUUID().toString();
		assertThat(post("/direct/payments", payment, key).statusCode()).isEqualTo(201);
		assertThat(post("/direct/payments", payment, key).statusCode()).isEqualTo(201);
		assertThat(backend.runs(payment)).isEqualTo(2);
	}

	@Test
	void theProtectedRouteDoesNotRequireAKey() {
		String payment = UUID.randomUUID().toString();
		assertThat(post("/api/payments", payment, null).statusCode()).isEqualTo(201);
		assertThat(post("/api/payments", payment, null).statusCode()).isEqualTo(201);
		assertThat(backend.runs(payment)).isEqualTo(2);
	}

	private HttpResponse<String> post(String path, String payment, String key) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"payment\":\"" + payment + "\"}"));
		if (key != null) {
			request.header("Idempotency-Key", "\"" + key + "\"");
		}
		try {
			return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A backend that knows nothing of idempotency keys: every request is a new payment.
	 */
	record Backend(HttpServer server, Map<String, AtomicInteger> runs) {

		static Backend start() {
			try {
				HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
				Backend backend = new Backend(server, new ConcurrentHashMap<>());
				server.createContext("/payments", backend::handle);
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

		int runs(String payment) {
			AtomicInteger runs = this.runs.get(payment);
			return (runs != null) ? runs.get() : 0;
		}

		private void handle(HttpExchange exchange) throws IOException {
			String body;
			try (InputStream in = exchange.getRequestBody()) {
				body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
			String payment = body.replaceAll(".*\"payment\":\"([^\"]+)\".*", "$1");
			int run = this.runs.computeIfAbsent(payment, (k) -> new AtomicInteger()).incrementAndGet();
			byte[] answer = ("{\"payment\":\"" + payment + "\",\"id\":\"" + UUID.randomUUID() + "\",\"run\":" + run
					+ "}")
				.getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.sendResponseHeaders(201, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
		}

	}

}
