package dev.idempo.web;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisExecProvider;
import redis.embedded.RedisServer;

import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real store outage: the test runs its own Redis on a free port and stops it while the
 * application runs. Requests with a key then get 503 and the handler does not run; once
 * Redis is back, so is protection.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		"idempo.store.type=redis", "spring.data.redis.timeout=1s", "spring.data.redis.connect-timeout=1s" })
class RedisOutageHttpTests {

	private static final int REDIS_PORT = TestRedis.freePort();

	private static final RedisServer redis = startRedis();

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> REDIS_PORT);
	}

	@AfterAll
	static void stopRedis() {
		if (redis.isActive()) {
			redis.stop();
		}
	}

	@Test
	void storeOutageIs503AndTheHandlerDoesNotRun() {
		TestHttp http = new TestHttp(this.port);
		String stored = TestHttp.newKey();
		assertThat(http.postWithKey("/t/object", stored, "{}").statusCode()).isEqualTo(200);
		redis.stop();
		int before = this.executions.count("object");
		HttpResponse<byte[]> fresh = http.postWithKey("/t/object", TestHttp.newKey(), "{}");
		assertThat(fresh.statusCode()).isEqualTo(503);
		assertThat(fresh.headers().firstValue("Retry-After")).hasValue("5");
		assertThat(fresh.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(fresh)).contains("https://idempo.dev/problems/store-unavailable");
		assertThat(http.postWithKey("/t/object", stored, "{}").statusCode()).isEqualTo(503);
		assertThat(this.executions.count("object")).isEqualTo(before);
		redis.start();
		// the stored record went with the server (it keeps nothing on disk): the key runs
		// again
		HttpResponse<byte[]> back;
		long deadline = System.nanoTime() + 20_000_000_000L;
		do {
			back = http.postWithKey("/t/object", stored, "{}");
		}
		while (back.statusCode() == 503 && System.nanoTime() < deadline);
		assertThat(back.statusCode()).isEqualTo(200);
		assertThat(http.postWithKey("/t/object", stored, "{}").headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
	}

	private static RedisServer startRedis() {
		try {
			RedisServer server = new RedisServer(RedisExecProvider.defaultProvider(), REDIS_PORT);
			server.start();
			return server;
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

}
