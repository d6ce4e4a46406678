package dev.idempo.web.outage;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.TestHttp;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Applications on the Redis store start while nothing listens on their Redis address (the
 * test's {@link TcpProxy} to the real server starts only later, on that address):
 * <ul>
 * <li>fail-closed (the default): keyed requests get 503 with {@code Retry-After} and the
 * handler does not run; requests without a key are served;</li>
 * <li>fail-open: keyed requests run the handler unprotected;</li>
 * <li>both report the {@code idempo} health contributor DOWN;</li>
 * </ul>
 * and once Redis answers, both protect keyed requests again (run once, then replay) and
 * report UP, without a restart.
 *
 * @author idempo
 */
class RedisStartsDuringOutageTests {

	private static final String KEY_PREFIX = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	private static final long RECOVERY_NANOS = 30_000_000_000L;

	@AfterAll
	static void deleteKeys() {
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

	@Test
	void startsWhileRedisIsDownAndRecoversWithoutARestart() {
		URI real = URI.create(TestRedis.server().url());
		int port = TestRedis.freePort();
		try (ConfigurableApplicationContext failClosed = start(TestHttp.onLoopbackPort(real, port), "fail-closed");
				ConfigurableApplicationContext failOpen = start(TestHttp.onLoopbackPort(real, port), "fail-open")) {
			TestHttp closed = TestHttp.of(failClosed);
			TestHttp open = TestHttp.of(failOpen);
			Executions closedExecutions = failClosed.getBean(Executions.class);
			Executions openExecutions = failOpen.getBean(Executions.class);
			String key = TestHttp.newKey();

			HttpResponse<byte[]> refused = closed.postWithKey("/t/object", key, "{}");
			assertThat(refused.statusCode()).isEqualTo(503);
			assertThat(refused.headers().firstValue("Retry-After")).hasValue("5");
			assertThat(TestHttp.text(refused)).contains("https://idempo.dev/problems/store-unavailable");
			assertThat(closedExecutions.count("object")).isZero();
			assertThat(closed.post("/t/object", "{}").statusCode()).as("a request without a key").isEqualTo(200);
			assertThat(health(closed)).isEqualTo(503);

			assertThat(open.postWithKey("/t/object", key, "{}").statusCode()).isEqualTo(200);
			assertThat(open.postWithKey("/t/object", key, "{}").statusCode()).isEqualTo(200);
			assertThat(openExecutions.count("object")).as("unprotected: both ran").isEqualTo(2);
			assertThat(health(open)).isEqualTo(503);

			try (TcpProxy proxy = TcpProxy.start(port, real.getHost(), real.getPort())) {
				assertProtectedAgain(closed, closedExecutions);
				assertProtectedAgain(open, openExecutions);
				assertThat(health(closed)).isEqualTo(200);
				assertThat(health(open)).isEqualTo(200);
			}
		}
	}

	/**
	 * Polls with a fresh key until the store answers, then checks that the key ran once
	 * and replays.
	 */
	private static void assertProtectedAgain(TestHttp http, Executions executions) {
		String key = TestHttp.newKey();
		int before = executions.count("object");
		HttpResponse<byte[]> first = awaitNot503(() -> http.postWithKey("/t/object", key, "{}"));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(executions.count("object")).isEqualTo(before + 1);
		HttpResponse<byte[]> replay = http.postWithKey("/t/object", key, "{}");
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(executions.count("object")).isEqualTo(before + 1);
	}

	private static HttpResponse<byte[]> awaitNot503(Supplier<HttpResponse<byte[]>> request) {
		long deadline = System.nanoTime() + RECOVERY_NANOS;
		HttpResponse<byte[]> response = request.get();
		while (response.statusCode() == 503 && System.nanoTime() < deadline) {
			response = request.get();
		}
		return response;
	}

	private static int health(TestHttp http) {
		return http.send(http.request("GET", "/actuator/health/idempo", null)).statusCode();
	}

	private static ConfigurableApplicationContext start(URI redis, String failureMode) {
		return new SpringApplication(HttpTestApplication.class).run("--server.port=0", "--idempo.store.type=redis",
				"--idempo.store.redis.key-prefix=" + KEY_PREFIX, "--idempo.store-failure.mode=" + failureMode,
				"--spring.data.redis.url=" + redis, "--spring.data.redis.timeout=1s",
				"--spring.data.redis.connect-timeout=1s", "--management.endpoint.health.show-components=always");
	}

}
