package dev.idempo.checks;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Cloud Gateway (server-webflux) with the idempo starter in front of a backend
 * that is no Spring application, a JDK {@code HttpServer} that counts how often each
 * order runs: the route with the {@code Idempotency} filter, and the route without it
 * that an {@code idempo.routes} entry matches, forward each key once and replay the
 * backend's response to retries; a route matched by neither forwards every retry, so
 * these tests can fail. An entry matches the filtered route too (not required, while its
 * filter requires a key): the filter's settings apply, and the route is not protected
 * twice (a second claim of the same key would answer the first request 409).
 *
 * @author idempo
 */
@SpringBootTest(classes = GatewayIdempotencyFilterTests.Gateway.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempo.store.type=memory", "idempo.routes[0].path=/routed/**",
				"idempo.routes[1].path=/protected/**" })
class GatewayIdempotencyFilterTests {

	private static final Backend backend = Backend.start();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void backendRoutes(DynamicPropertyRegistry registry) {
		// all of the list in one property source: Boot binds a list from one source only
		String routes = "spring.cloud.gateway.server.webflux.routes";
		registry.add(routes + "[0].id", () -> "protected");
		registry.add(routes + "[0].uri", backend::url);
		registry.add(routes + "[0].predicates[0]", () -> "Path=/protected/**");
		registry.add(routes + "[0].filters[0]", () -> "Idempotency=1h,true");
		registry.add(routes + "[1].id", () -> "plain");
		registry.add(routes + "[1].uri", backend::url);
		registry.add(routes + "[1].predicates[0]", () -> "Path=/plain/**");
		registry.add(routes + "[2].id", () -> "routed");
		registry.add(routes + "[2].uri", backend::url);
		registry.add(routes + "[2].predicates[0]", () -> "Path=/routed/**");
	}

	@AfterAll
	static void stopBackend() {
		backend.server.stop(0);
	}

	@Test
	void theFirstRequestReachesTheBackendAndItsRetryIsReplayedByTheGateway() {
		assertReplayedByTheGateway("/protected/orders");
	}

	@Test
	void aRouteWithoutTheFilterThatAnEntryMatchesIsReplayedByTheGateway() {
		assertReplayedByTheGateway("/routed/orders");
	}

	private void assertReplayedByTheGateway(String path) {
		Client http = new Client(this.port);
		String order = UUID.randomUUID().toString();
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = http.post(path, body(order), "Idempotency-Key", key);
		HttpResponse<byte[]> retry = http.post(path, body(order), "Idempotency-Key", key);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("X-Backend")).hasValue("jdk");
		assertThat(backend.runs(order)).isOne();
	}

	@Test
	void withoutTheFilterEveryRetryReachesTheBackend() {
		Client http = new Client(this.port);
		String order = UUID.randomUUID().toString();
		String key = UUID.randomUUID().toString();
		assertThat(http.post("/plain/orders", body(order), "Idempotency-Key", key).statusCode()).isEqualTo(201);
		assertThat(http.post("/plain/orders", body(order), "Idempotency-Key", key).statusCode()).isEqualTo(201);
		assertThat(backend.runs(order)).isEqualTo(2);
	}

	@Test
	void concurrentDuplicatesReachTheBackendOnce() throws Exception {
		assertConcurrentDuplicatesReachTheBackendOnce("/protected/orders");
	}

	@Test
	void concurrentDuplicatesOnARouteThatAnEntryMatchesReachTheBackendOnce() throws Exception {
		assertConcurrentDuplicatesReachTheBackendOnce("/routed/orders");
	}

	private void assertConcurrentDuplicatesReachTheBackendOnce(String path) throws Exception {
		String order = UUID.randomUUID().toString();
		String key = UUID.randomUUID().toString();
		int requests = 16;
		List<byte[]> created = new ArrayList<>();
		ExecutorService clients = Executors.newFixedThreadPool(requests);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<byte[]>>> answers = new ArrayList<>();
			for (int i = 0; i < requests; i++) {
				answers.add(clients.submit(() -> {
					start.await();
					return new Client(this.port).post(path, body(order), "Idempotency-Key", key);
				}));
			}
			start.countDown();
			for (Future<HttpResponse<byte[]>> answer : answers) {
				HttpResponse<byte[]> response = answer.get(60, TimeUnit.SECONDS);
				assertThat(response.statusCode()).isIn(201, 409);
				if (response.statusCode() == 409) {
					assertThat(response.headers().firstValue("Retry-After")).isPresent();
				}
				else {
					created.add(response.body());
				}
			}
		}
		finally {
			clients.shutdownNow();
		}
		assertThat(backend.runs(order)).isOne();
		assertThat(created).isNotEmpty().allSatisfy((body) -> assertThat(body).isEqualTo(created.get(0)));
		HttpResponse<byte[]> retry = new Client(this.port).post(path, body(order), "Idempotency-Key", key);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(created.get(0));
		assertThat(backend.runs(order)).isOne();
	}

	/**
	 * The entry that matches {@code /protected/**} requires no key; the route's
	 * {@code Idempotency} filter does, and its settings apply.
	 */
	@Test
	void aRouteThatRequiresAKeyRefusesARequestWithoutOneBeforeTheBackend() {
		String order = UUID.randomUUID().toString();
		HttpResponse<byte[]> response = new Client(this.port).post("/protected/orders", body(order));
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(backend.runs(order)).isZero();
	}

	@Test
	void aRouteThatAnEntryMatchesLetsARequestWithoutAKeyThrough() {
		Client http = new Client(this.port);
		String order = UUID.randomUUID().toString();
		assertThat(http.post("/routed/orders", body(order)).statusCode()).isEqualTo(201);
		assertThat(http.post("/routed/orders", body(order)).statusCode()).isEqualTo(201);
		assertThat(backend.runs(order)).isEqualTo(2);
	}

	@Test
	void aKeyReusedWithAnotherBodyIsRefusedWith422() {
		Client http = new Client(this.port);
		String key = UUID.randomUUID().toString();
		String order = UUID.randomUUID().toString();
		String other = UUID.randomUUID().toString();
		assertThat(http.post("/protected/orders", body(order), "Idempotency-Key", key).statusCode()).isEqualTo(201);
		assertThat(http.post("/protected/orders", body(other), "Idempotency-Key", key).statusCode()).isEqualTo(422);
		assertThat(backend.runs(other)).isZero();
	}

	private static String body(String order) {
		return "{\"order\":\"" + order + "\"}";
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Gateway {

	}

	/** A real HTTP/1.1 client of the gateway. */
	record Client(int port) {

		private static final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

		HttpResponse<byte[]> post(String path, String body, String... headers) {
			HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
				.timeout(Duration.ofSeconds(60))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(body));
			for (int i = 0; i < headers.length; i += 2) {
				request.header(headers[i], headers[i + 1]);
			}
			try {
				return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

	}

	/** The backend: counts the runs of each order, answers 201 after some work. */
	record Backend(HttpServer server, Map<String, AtomicInteger> runs) {

		static Backend start() {
			try {
				HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
				Backend backend = new Backend(server, new ConcurrentHashMap<>());
				server.createContext("/", backend::handle);
				server.setExecutor(Executors.newFixedThreadPool(8));
				server.start();
				return backend;
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		String url() {
			return "http://127.0.0.1:" + this.server.getAddress().getPort();
		}

		int runs(String order) {
			AtomicInteger runs = this.runs.get(order);
			return (runs != null) ? runs.get() : 0;
		}

		private void handle(HttpExchange exchange) throws IOException {
			String body;
			try (InputStream in = exchange.getRequestBody()) {
				body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
			String order = body.replaceAll(".*\"order\":\"([^\"]+)\".*", "$1");
			int run = this.runs.computeIfAbsent(order, (k) -> new AtomicInteger()).incrementAndGet();
			try {
				// the backend's work: long enough for duplicates to arrive meanwhile
				Thread.sleep(200);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			byte[] answer = ("{\"order\":\"" + order + "\",\"run\":" + run + ",\"at\":" + System.nanoTime() + "}")
				.getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.getResponseHeaders().set("X-Backend", "jdk");
			exchange.sendResponseHeaders(201, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
		}

	}

}
