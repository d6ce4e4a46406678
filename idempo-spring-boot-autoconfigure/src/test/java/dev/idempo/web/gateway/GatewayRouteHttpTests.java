package dev.idempo.web.gateway;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.web.TestHttp;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Cloud Gateway (server-webmvc) route protected by {@code idempo.routes} alone,
 * in front of a backend that idempo knows nothing of (a JDK {@link HttpServer}): many
 * concurrent duplicates of one key through the gateway run the backend once, and every
 * duplicate gets the same response, replayed. Without the route entry the same duplicates
 * reach the backend again.
 *
 * @author idempo
 */
class GatewayRouteHttpTests {

	private static final int DUPLICATES = 30;

	private final AtomicInteger executions = new AtomicInteger();

	private final CountDownLatch entered = new CountDownLatch(1);

	private final CountDownLatch release = new CountDownLatch(1);

	private final ExecutorService backendThreads = Executors.newCachedThreadPool();

	private HttpServer backend;

	@BeforeEach
	void startBackend() throws IOException {
		this.backend = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		this.backend.setExecutor(this.backendThreads);
		this.backend.createContext("/payments", this::pay);
		this.backend.start();
	}

	@AfterEach
	void stopBackend() {
		this.release.countDown();
		this.backend.stop(0);
		this.backendThreads.shutdownNow();
	}

	/** Holds the first execution until the test has sent every duplicate. */
	private void pay(HttpExchange exchange) throws IOException {
		int execution = this.executions.incrementAndGet();
		this.entered.countDown();
		try {
			this.release.await(60, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		byte[] body = ("{\"payment\":\"pay-" + execution + "\",\"amount\":"
				+ new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8) + "}")
			.getBytes(StandardCharsets.UTF_8);
		exchange.getResponseHeaders().add("Content-Type", "application/json");
		exchange.getResponseHeaders().add("X-Backend-Execution", Integer.toString(execution));
		exchange.sendResponseHeaders(201, body.length);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(body);
		}
	}

	@Test
	void concurrentDuplicatesThroughAProtectedRouteRunTheBackendOnceAndReplay() throws Exception {
		try (ConfigurableApplicationContext gateway = gateway("--idempo.routes[0].path=/payments/**")) {
			List<HttpResponse<byte[]>> responses = sendDuplicates(gateway);
			assertThat(this.executions).hasValue(1);
			HttpResponse<byte[]> first = responses.stream()
				.filter((response) -> response.headers().firstValue("Idempotent-Replayed").isEmpty())
				.findFirst()
				.orElseThrow();
			assertThat(first.statusCode()).isEqualTo(201);
			assertThat(responses).allSatisfy((response) -> {
				assertThat(response.statusCode()).isEqualTo(201);
				assertThat(response.body()).isEqualTo(first.body());
				assertThat(response.headers().firstValue("X-Backend-Execution")).hasValue("1");
			});
			assertThat(responses)
				.filteredOn((response) -> response.headers().firstValue("Idempotent-Replayed").isPresent())
				.hasSize(DUPLICATES - 1)
				.allSatisfy((response) -> assertThat(response.headers().firstValue("Idempotent-Replayed"))
					.hasValue("true"));
		}
	}

	@Test
	void withoutTheRouteEntryTheDuplicatesReachTheBackend() throws Exception {
		try (ConfigurableApplicationContext gateway = gateway()) {
			List<HttpResponse<byte[]>> responses = sendDuplicates(gateway);
			assertThat(this.executions.get()).isGreaterThan(1);
			assertThat(responses).noneSatisfy(
					(response) -> assertThat(response.headers().firstValue("Idempotent-Replayed")).isPresent());
		}
	}

	private ConfigurableApplicationContext gateway(String... arguments) {
		// the gateway's own servlet filters as it ships them (the module's tests turn
		// them off)
		List<String> all = new ArrayList<>(List.of("--server.port=0", "--idempo.conflict.wait-timeout=60s",
				"--spring.cloud.gateway.server.webmvc.form-filter.enabled=true",
				"--spring.cloud.gateway.server.webmvc.weight-calculator-filter.enabled=true",
				"--spring.cloud.gateway.server.webmvc.routes[0].id=payments",
				"--spring.cloud.gateway.server.webmvc.routes[0].uri=http://127.0.0.1:"
						+ this.backend.getAddress().getPort(),
				"--spring.cloud.gateway.server.webmvc.routes[0].predicates[0]=Path=/payments/**"));
		all.addAll(List.of(arguments));
		return new SpringApplicationBuilder(GatewayApplication.class).run(all.toArray(String[]::new));
	}

	/**
	 * Sends the duplicates at once and lets the backend answer only when all of them have
	 * reached the gateway, so that every duplicate meets the first in flight.
	 */
	private List<HttpResponse<byte[]>> sendDuplicates(ConfigurableApplicationContext gateway) throws Exception {
		TestHttp http = new TestHttp(((WebServerApplicationContext) gateway).getWebServer().getPort());
		GatewayApplication application = gateway.getBean(GatewayApplication.class);
		String key = TestHttp.newKey();
		ExecutorService clients = Executors.newFixedThreadPool(DUPLICATES);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
			for (int i = 0; i < DUPLICATES; i++) {
				futures.add(clients.submit(() -> {
					start.await();
					return http.postWithKey("/payments/42", key, "125");
				}));
			}
			start.countDown();
			assertThat(this.entered.await(30, TimeUnit.SECONDS)).isTrue();
			awaitArrivals(application);
			this.release.countDown();
			List<HttpResponse<byte[]>> responses = new ArrayList<>();
			for (Future<HttpResponse<byte[]>> future : futures) {
				responses.add(future.get(60, TimeUnit.SECONDS));
			}
			return responses;
		}
		finally {
			clients.shutdownNow();
		}
	}

	private static void awaitArrivals(GatewayApplication application) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (application.arrived() < DUPLICATES && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(application.arrived()).as("requests that reached the gateway").isEqualTo(DUPLICATES);
	}

}
