package dev.idempo.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import dev.idempo.autoconfigure.client.IdempotencyClientAutoConfiguration;
import dev.idempo.client.downstream.DownstreamApplication;
import dev.idempo.client.downstream.DownstreamApplication.Charges;
import dev.idempo.client.downstream.DownstreamApplication.Request;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestRedis;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The client against a real idempo server over HTTP: {@link DownstreamApplication} on the
 * Redis store, reached through a {@link TcpProxy} that can lose answers, and a
 * {@code RestClient} built from Spring Boot's auto-configured builder with
 * {@code idempo.client.enabled=true}. The handler's executions are counted on the server,
 * and every request that reached it is logged with its key.
 *
 * @author idempo
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IdempotencyClientHttpTests {

	private static final String KEY_PREFIX = "idempo-client-test:" + UUID.randomUUID().toString().replace("-", "")
			+ ":";

	private ConfigurableApplicationContext server;

	private Charges charges;

	private TcpProxy proxy;

	private RestClient client;

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@BeforeAll
	void startServer() {
		this.server = new SpringApplicationBuilder(DownstreamApplication.class).run("--server.port=0",
				"--spring.main.banner-mode=off", "--spring.jmx.enabled=false", "--idempo.store.type=redis",
				"--spring.data.redis.url=" + TestRedis.server().url(), "--idempo.store.redis.key-prefix=" + KEY_PREFIX,
				"--idempo.conflict.retry-after=1s");
		this.charges = this.server.getBean(Charges.class);
		this.proxy = TcpProxy.start(0, "127.0.0.1", serverPort());
		this.client = buildClient();
	}

	@AfterEach
	void forward() {
		this.proxy.forward();
		this.charges.release();
	}

	@AfterAll
	void stopServer() {
		if (this.proxy != null) {
			this.proxy.close();
		}
		if (this.server != null) {
			this.server.close();
		}
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

	/**
	 * The server charged and answered, the connection was reset before the answer
	 * arrived: the client retries with the key it made for the call, and the server
	 * replays the answer instead of charging again.
	 */
	@Test
	@Timeout(60)
	void aLostAnswerIsRetriedWithTheSameKeyAndReplayed() {
		String reference = UUID.randomUUID().toString();
		this.proxy.resetNextReplies(1);
		ResponseEntity<String> answer = client().post()
			.uri("/charges")
			.contentType(MediaType.APPLICATION_JSON)
			.header(DownstreamApplication.REFERENCE_HEADER, reference)
			.body("{\"reference\":\"" + reference + "\"}")
			.retrieve()
			.toEntity(String.class);
		assertThat(answer.getStatusCode().value()).isEqualTo(201);
		assertThat(answer.getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(answer.getBody()).contains("\"execution\":1");
		assertThat(this.charges.executions(reference)).as("the handler ran once").isEqualTo(1);
		assertThat(this.proxy.resets()).as("the first answer was lost").isPositive();
		// the server records a request after its response went out: wait for the replay's
		List<Request> requests = awaitRecorded(() -> this.charges.requestsWithReference(reference),
				(recorded) -> recorded.stream().anyMatch(Request::replayed));
		assertThat(requests).as("the first attempt and its retry reached the server").hasSizeGreaterThanOrEqualTo(2);
		assertThat(requests).extracting(Request::key).doesNotContainNull().containsOnly(requests.get(0).key());
		assertThat(requests.get(0).status()).isEqualTo(201);
		assertThat(requests.get(0).replayed()).isFalse();
		assertThat(requests.get(requests.size() - 1).replayed()).isTrue();
	}

	/**
	 * The retry meets the first request still running: 409 with {@code Retry-After: 1}.
	 * The client waits that second (its own backoff would be 10 ms), by which time the
	 * first has finished, and gets the replay.
	 */
	@Test
	@Timeout(60)
	void aRetryThatMeetsTheRunningFirstWaitsItsRetryAfterAndGetsTheReplay() throws Exception {
		String reference = UUID.randomUUID().toString();
		String key = "\"" + UUID.randomUUID() + "\"";
		String body = "{\"reference\":\"" + reference + "\"}";
		this.charges.hold();
		CompletableFuture<HttpResponse<String>> first = this.http
			.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serverPort() + "/charges"))
				.header("Content-Type", "application/json")
				.header("Idempotency-Key", key)
				.POST(HttpRequest.BodyPublishers.ofString(body))
				.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(this.charges.awaitEntered()).isTrue();
		CompletableFuture<ResponseEntity<String>> retry = CompletableFuture.supplyAsync(() -> client().post()
			.uri("/charges")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.body(body)
			.retrieve()
			.toEntity(String.class));
		awaitRequest(key, 409);
		this.charges.release();
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		ResponseEntity<String> answer = retry.get(30, TimeUnit.SECONDS);
		assertThat(answer.getStatusCode().value()).isEqualTo(201);
		assertThat(answer.getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(answer.getBody()).isEqualTo(first.get().body());
		assertThat(this.charges.executions(reference)).isEqualTo(1);
		// the server records a request after its response went out: wait for the third
		List<Request> requests = awaitRecorded(() -> this.charges.requests(key), (recorded) -> recorded.size() >= 3);
		assertThat(requests).extracting(Request::status).containsExactly(409, 201, 201);
		long waited = requests.get(2).arrivedNanos() - requests.get(0).arrivedNanos();
		assertThat(TimeUnit.NANOSECONDS.toMillis(waited)).as("the retry came after Retry-After, not the backoff")
			.isGreaterThanOrEqualTo(950);
	}

	private RestClient client() {
		return this.client;
	}

	/**
	 * A client from Spring Boot's auto-configured builder, idempo's interceptor on, with
	 * a backoff far shorter than the server's Retry-After.
	 */
	private RestClient buildClient() {
		RestClient[] client = new RestClient[1];
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyClientAutoConfiguration.class,
					HttpClientAutoConfiguration.class, RestClientAutoConfiguration.class))
			.withPropertyValues("idempo.client.enabled=true", "idempo.client.backoff.initial=10ms",
					"idempo.client.backoff.max=20ms")
			.run((context) -> client[0] = context.getBean(RestClient.Builder.class)
				.baseUrl("http://127.0.0.1:" + this.proxy.port())
				.build());
		return client[0];
	}

	private void awaitRequest(String key, int status) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (this.charges.requests(key).stream().noneMatch((request) -> request.status() == status)) {
			if (System.nanoTime() > deadline) {
				fail("No request with key " + key + " was answered " + status);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
		}
	}

	/** Polls the recorded requests until {@code done} holds, or 30 seconds passed. */
	private static List<Request> awaitRecorded(Supplier<List<Request>> recorded, Predicate<List<Request>> done) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		List<Request> requests = recorded.get();
		while (!done.test(requests) && System.nanoTime() < deadline) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
			requests = recorded.get();
		}
		return requests;
	}

	private int serverPort() {
		return Integer.parseInt(this.server.getEnvironment().getRequiredProperty("local.server.port"));
	}

}
