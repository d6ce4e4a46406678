package dev.idempo.client.chain;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import dev.idempo.client.downstream.DownstreamApplication;
import dev.idempo.client.downstream.DownstreamApplication.Charges;
import dev.idempo.client.downstream.DownstreamApplication.Request;
import dev.idempo.testsupport.ApplicationProcess;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.testsupport.TestRedis;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * Keys derived downstream, end to end: service A ({@link ChainApplication}, a JVM of its
 * own, on the PostgreSQL store) handles an idempotent order by charging it at service B
 * ({@link DownstreamApplication}, in this JVM, on the Redis store) through idempo's
 * client. A is SIGKILLed after B answered and before A stored its response; the caller
 * retries A with its key, A (started again, on the same store) runs the handler again,
 * and the charge it makes carries the same derived key, so B replays instead of charging
 * twice. The same run with {@code idempo.client.derived-keys=false} charges twice, so the
 * test can fail. B's executions are counted in B.
 * <p>
 * A chaos run (tagged {@code chaos}: {@code -Pchaos}, which CI runs after the plain
 * {@code verify}): two JVMs of A, started, killed and started again, a minute and a half.
 * The plain suite keeps what it rests on: {@code IdempotencyClientInterceptorTests}
 * (calls during an execution get keys derived from it, in order, the same for the same
 * call) and {@code CallBindingHttpTests} (a protected handler's thread carries its
 * execution).
 *
 * @author idempo
 */
@Tag("chaos")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DerivedKeysChainTests {

	private static final String HIBERNATE = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration";

	private static final String KEY_PREFIX = "idempo-chain-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(60);

	private final String recordTable = SqlStoreProperties.randomTable();

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private @Nullable ConfigurableApplicationContext serviceB;

	private @Nullable Charges charges;

	private @Nullable ApplicationProcess derived;

	private @Nullable ApplicationProcess random;

	private Path signals = Path.of("unset");

	@BeforeAll
	void startServices() throws IOException {
		this.serviceB = new SpringApplicationBuilder(DownstreamApplication.class).run("--server.port=0",
				"--spring.main.banner-mode=off", "--spring.jmx.enabled=false", "--idempo.store.type=redis",
				"--spring.data.redis.url=" + TestRedis.server().url(), "--idempo.store.redis.key-prefix=" + KEY_PREFIX);
		this.charges = this.serviceB.getBean(Charges.class);
		int portB = Integer.parseInt(this.serviceB.getEnvironment().getRequiredProperty("local.server.port"));
		TestDatabase database = TestDatabases.postgres();
		Path directory = Files.createDirectories(
				Path.of("target", "chain-tests", getClass().getSimpleName() + "-" + System.currentTimeMillis()));
		this.signals = Files.createDirectories(directory.resolve("signals"));
		List<String> arguments = new ArrayList<>();
		arguments.add("--spring.datasource.url=" + database.url());
		if (database.username() != null) {
			arguments.add("--spring.datasource.username=" + database.username());
		}
		if (database.password() != null) {
			arguments.add("--spring.datasource.password=" + database.password());
		}
		arguments.add("--spring.autoconfigure.exclude=" + HIBERNATE);
		arguments.add("--spring.main.banner-mode=off");
		arguments.add("--spring.jmx.enabled=false");
		arguments.add("--idempo.store.type=postgres");
		arguments.add("--idempo.store.jdbc.table-name=" + this.recordTable);
		arguments.add("--idempo.store.jdbc.initialize-schema=always");
		arguments.add("--idempo.client.enabled=true");
		arguments.add("--idempo.client.backoff.initial=10ms");
		arguments.add("--idempo.client.backoff.max=50ms");
		arguments.add("--chain.b-url=http://127.0.0.1:" + portB);
		arguments.add("--chain.signal-dir=" + this.signals.toAbsolutePath());
		List<String> withoutDerivedKeys = new ArrayList<>(arguments);
		withoutDerivedKeys.add("--idempo.client.derived-keys=false");
		this.derived = new ApplicationProcess(ChainApplication.class, "derived", directory, arguments);
		this.random = new ApplicationProcess(ChainApplication.class, "random", directory, withoutDerivedKeys);
		this.derived.start();
		this.random.start();
		this.derived.awaitReady();
		this.random.awaitReady();
	}

	@AfterAll
	void stopServices() {
		try {
			for (ApplicationProcess service : new ApplicationProcess[] { this.derived, this.random }) {
				if (service != null && service.isAlive()) {
					service.kill();
				}
			}
		}
		finally {
			if (this.serviceB != null) {
				this.serviceB.close();
			}
			TestRedis.server().deleteKeys(KEY_PREFIX);
			TestDatabases.postgres().dropTable(this.recordTable);
		}
	}

	@Test
	@Timeout(300)
	void aReRunAfterACrashSendsTheSameDerivedKeyAndTheDownstreamServiceReplays() throws Exception {
		String reference = crashAfterTheChargeAndRetry(service(this.derived), "/orders");
		assertThat(charges().executions(reference)).as("B's handler ran once").isEqualTo(1);
		List<Request> charged = charges().requestsWithReference(reference);
		assertThat(charged).hasSize(2);
		assertThat(charged.get(0).key()).isNotNull().isEqualTo(charged.get(1).key());
		assertThat(charged.get(0).replayed()).isFalse();
		assertThat(charged.get(1).replayed()).as("B replayed to the re-run").isTrue();
	}

	@Test
	@Timeout(300)
	void aTransactionalHandlersReRunSendsTheSameDerivedKeyToo() throws Exception {
		String reference = crashAfterTheChargeAndRetry(service(this.derived), "/transactional-orders");
		assertThat(charges().executions(reference)).as("B's handler ran once").isEqualTo(1);
		List<Request> charged = charges().requestsWithReference(reference);
		assertThat(charged).hasSize(2);
		assertThat(charged.get(0).key()).isNotNull().isEqualTo(charged.get(1).key());
		assertThat(charged.get(1).replayed()).isTrue();
	}

	@Test
	@Timeout(300)
	void withoutDerivedKeysTheReRunChargesTwice() throws Exception {
		String reference = crashAfterTheChargeAndRetry(service(this.random), "/orders");
		assertThat(charges().executions(reference)).as("B's handler ran for each run of A").isEqualTo(2);
		List<Request> charged = charges().requestsWithReference(reference);
		assertThat(charged).hasSize(2);
		assertThat(charged.get(0).key()).isNotEqualTo(charged.get(1).key());
		assertThat(charged).noneMatch(Request::replayed);
	}

	/**
	 * Orders at A ({@code path}) with a pause after B's charge, kills A there, starts it
	 * again and retries the order with the same key, which A runs again.
	 * @return the order's reference
	 */
	private String crashAfterTheChargeAndRetry(ApplicationProcess serviceA, String path) throws Exception {
		String reference = UUID.randomUUID().toString();
		String key = UUID.randomUUID().toString();
		CompletableFuture<HttpResponse<String>> held = this.http.sendAsync(order(serviceA, path, reference, key, true),
				HttpResponse.BodyHandlers.ofString());
		awaitSignal(reference, held, serviceA);
		assertThat(charges().executions(reference)).as("B charged before A was killed").isEqualTo(1);
		serviceA.kill();
		assertThatThrownBy(() -> held.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
			.hasCauseInstanceOf(IOException.class);
		serviceA.start();
		serviceA.awaitReady();
		HttpResponse<String> retry = retryWhileBusy(serviceA, path, reference, key);
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("A ran again: it had stored nothing")
			.isEmpty();
		assertThat(retry.body()).contains(reference);
		return reference;
	}

	/**
	 * Retries while A answers 409 or 503: PostgreSQL may still be ending the killed
	 * instance's session, and with it its lock on the key.
	 */
	private HttpResponse<String> retryWhileBusy(ApplicationProcess serviceA, String path, String reference, String key)
			throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (true) {
			HttpResponse<String> response = this.http.send(order(serviceA, path, reference, key, false),
					HttpResponse.BodyHandlers.ofString());
			if ((response.statusCode() != 409 && response.statusCode() != 503) || System.nanoTime() > deadline) {
				return response;
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
	}

	private HttpRequest order(ApplicationProcess serviceA, String path, String reference, String key, boolean pause) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serviceA.port() + path))
			.timeout(Duration.ofSeconds(60))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"reference\":\"" + reference + "\"}"));
		if (pause) {
			builder.header(ChainApplication.PAUSE_HEADER, "true");
		}
		return builder.build();
	}

	private void awaitSignal(String reference, CompletableFuture<HttpResponse<String>> held,
			ApplicationProcess serviceA) {
		Path signal = this.signals.resolve(reference);
		long deadline = System.nanoTime() + SIGNAL_TIMEOUT.toNanos();
		while (!Files.exists(signal)) {
			if (held.isDone()) {
				fail("A answered instead of pausing after the charge: " + held.join().statusCode() + " "
						+ held.join().body() + "\n" + serviceA.logTail());
			}
			if (!serviceA.isAlive()) {
				fail(serviceA.incarnationName() + " died before the charge:\n" + serviceA.logTail());
			}
			if (System.nanoTime() > deadline) {
				fail("A did not pause after the charge within " + SIGNAL_TIMEOUT + ":\n" + serviceA.logTail());
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

	private Charges charges() {
		Charges charges = this.charges;
		assertThat(charges).isNotNull();
		return charges;
	}

	private static ApplicationProcess service(@Nullable ApplicationProcess service) {
		assertThat(service).isNotNull();
		return service;
	}

}
