package dev.idempo.web.cache;

import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.LocallyCachedLockingStore;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.TestHttp;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local replay cache ({@code idempo.local-cache.enabled=true}) on two instances that
 * share one Redis. Instance A reaches Redis through a {@link TcpProxy}; black-holing it
 * (nothing passes, nothing is closed) shows which answers need Redis: without the cache a
 * replay's claim times out there (503), with it a record A stored or replayed is replayed
 * with no byte sent to Redis, and a retry with another body is still rejected with 422.
 * An eviction through B's {@code idempo} endpoint reaches A through Redis pub/sub: A
 * stops replaying its copy and runs the handler again (without the subscription A would
 * replay its copy for the whole {@code max-age} of ten minutes). A copy never outlives
 * its record's time to live.
 *
 * @author idempo
 */
class RedisLocalCacheHttpTests {

	private static final String KEY_PREFIX = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	private static final String COMMAND_TIMEOUT = "300ms";

	private static final long POLL_NANOS = TimeUnit.SECONDS.toNanos(20);

	private static final String ORDER = "{\"item\":\"book\",\"quantity\":1}";

	private static TcpProxy proxy;

	private static ConfigurableApplicationContext instanceA;

	private static ConfigurableApplicationContext instanceB;

	@BeforeAll
	static void startInstances() {
		URI real = URI.create(TestRedis.server().url());
		proxy = TcpProxy.start(0, real.getHost(), real.getPort());
		instanceA = start(TestHttp.onLoopbackPort(real, proxy.port()));
		instanceB = start(real);
		// B's orders are numbered from 1001, so that its bodies never equal A's
		for (int i = 1; i < 1001; i++) {
			executions(instanceB).increment("orders");
		}
	}

	@AfterAll
	static void stopInstances() {
		if (proxy != null) {
			proxy.forward();
		}
		if (instanceA != null) {
			instanceA.close();
		}
		if (instanceB != null) {
			instanceB.close();
		}
		if (proxy != null) {
			proxy.close();
		}
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

	@AfterEach
	void heal() {
		proxy.forward();
	}

	@Test
	void aReplayOfARecordThisInstanceStoredNeedsNoRedisAndAnotherBodyIsStill422() {
		TestHttp a = TestHttp.of(instanceA);
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = a.postWithKey("/t/orders", key, ORDER);
		assertThat(first.statusCode()).isEqualTo(201);
		long hits = cache(instanceA).hits();

		proxy.blackHole();
		HttpResponse<byte[]> replay = a.postWithKey("/t/orders", key, ORDER);
		assertThat(replay.statusCode()).as("replayed from the local copy, Redis unreachable").isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		HttpResponse<byte[]> otherBody = a.postWithKey("/t/orders", key, "{\"item\":\"pen\",\"quantity\":2}");
		assertThat(otherBody.statusCode()).as("the copy carries the fingerprint").isEqualTo(422);
		assertThat(cache(instanceA).hits() - hits).isEqualTo(2);
		assertThat(executions(instanceA).count("orders")).isEqualTo(executionsBefore(first));
	}

	@Test
	void aRecordReplayedFromRedisOnceIsThenReplayedWithoutIt() {
		TestHttp a = TestHttp.of(instanceA);
		String key = TestHttp.newKey();
		HttpResponse<byte[]> stored = TestHttp.of(instanceB).postWithKey("/t/orders", key, ORDER);
		assertThat(stored.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> fromRedis = a.postWithKey("/t/orders", key, ORDER);
		assertThat(fromRedis.headers().firstValue("Idempotent-Replayed")).hasValue("true");

		proxy.blackHole();
		HttpResponse<byte[]> local = a.postWithKey("/t/orders", key, ORDER);
		assertThat(local.statusCode()).isEqualTo(201);
		assertThat(local.body()).isEqualTo(stored.body());
		// a key A holds no copy of still needs Redis: its claim fails closed
		assertThat(a.postWithKey("/t/orders", TestHttp.newKey(), ORDER).statusCode()).isEqualTo(503);
	}

	@Test
	void anEvictionThroughOneInstancesEndpointEndsEveryInstancesCopy() {
		TestHttp a = TestHttp.of(instanceA);
		TestHttp b = TestHttp.of(instanceB);
		String key = TestHttp.newKey();
		HttpResponse<byte[]> copied = a.postWithKey("/t/orders", key, ORDER);
		assertThat(copied.statusCode()).isEqualTo(201);
		assertThat(b.postWithKey("/t/orders", key, ORDER).headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(a.postWithKey("/t/orders", key, ORDER).headers().firstValue("Idempotent-Replayed")).hasValue("true");
		int executionsA = executions(instanceA).count("orders");
		int executionsB = executions(instanceB).count("orders");

		assertThat(TestHttp.text(b.send(b.request("DELETE", "/actuator/idempo?key=" + key, null))))
			.contains("\"evicted\":true");
		// B dropped its own copy before answering
		HttpResponse<byte[]> onB = b.postWithKey("/t/orders", key, ORDER);
		assertThat(onB.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(executions(instanceB).count("orders")).isEqualTo(executionsB + 1);
		assertThat(onB.body()).isNotEqualTo(copied.body());
		// B's new record is what A replays once the eviction reached it: its copy is gone
		long deadline = System.nanoTime() + POLL_NANOS;
		HttpResponse<byte[]> onA = a.postWithKey("/t/orders", key, ORDER);
		while (!Arrays.equals(onA.body(), onB.body()) && System.nanoTime() < deadline) {
			onA = a.postWithKey("/t/orders", key, ORDER);
		}
		assertThat(onA.body()).as("A replays B's new record, not its evicted copy").isEqualTo(onB.body());
		assertThat(executions(instanceA).count("orders")).isEqualTo(executionsA);
	}

	@Test
	void aCopyNeverOutlivesItsRecord() {
		TestHttp a = TestHttp.of(instanceA);
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = a.postWithKey("/t/short-ttl", key, "{}");
		long stored = System.nanoTime();
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		int executions = executions(instanceA).count("short-ttl");
		long deadline = System.nanoTime() + POLL_NANOS;
		HttpResponse<byte[]> later;
		long sent;
		do {
			sent = System.nanoTime();
			later = a.postWithKey("/t/short-ttl", key, "{}");
		}
		while (later.headers().firstValue("Idempotent-Replayed").isPresent() && System.nanoTime() < deadline);
		assertThat(later.headers().firstValue("Idempotent-Replayed")).as("the record expired").isEmpty();
		assertThat(executions(instanceA).count("short-ttl")).isEqualTo(executions + 1);
		// and until then the copy answered: the record's two seconds, not the first
		assertThat(Duration.ofNanos(sent - stored)).isGreaterThanOrEqualTo(Duration.ofMillis(1500));
		assertThat(cache(instanceA).hits()).isPositive();
	}

	private static int executionsBefore(HttpResponse<byte[]> first) {
		return Integer.parseInt(first.headers().firstValue("X-Order-Execution").orElseThrow());
	}

	private static LocallyCachedLockingStore cache(ConfigurableApplicationContext instance) {
		return instance.getBean(LocallyCachedLockingStore.class);
	}

	private static Executions executions(ConfigurableApplicationContext instance) {
		return instance.getBean(Executions.class);
	}

	private static ConfigurableApplicationContext start(URI redis) {
		return new SpringApplication(HttpTestApplication.class).run("--server.port=0", "--idempo.store.type=redis",
				"--idempo.store.redis.key-prefix=" + KEY_PREFIX, "--idempo.local-cache.enabled=true",
				"--idempo.local-cache.max-age=10m", "--management.endpoints.web.exposure.include=idempo",
				"--spring.data.redis.url=" + redis, "--spring.data.redis.timeout=" + COMMAND_TIMEOUT,
				"--spring.data.redis.connect-timeout=" + COMMAND_TIMEOUT);
	}

}
