package dev.idempo.web;

import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

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
 * A handler that runs for several lease lengths keeps its key on Redis: the lease is
 * renewed while it runs, so duplicates keep getting 409 and its response is stored.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempo.store.type=redis", "idempo.lock-ttl=600ms" })
class RedisLeaseRenewalHttpTests {

	private static final String KEY_PREFIX = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> TestRedis.server().url());
		registry.add("idempo.store.redis.key-prefix", () -> KEY_PREFIX);
	}

	@AfterAll
	static void deleteKeys() {
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

	@Test
	void leaseIsRenewedWhileTheHandlerRuns() throws Exception {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		this.executions.holdHandlers();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor.submit(() -> http.postWithKey("/t/slow", key, "{}"));
			assertThat(this.executions.awaitEntered()).isTrue();
			// five lease lengths: without renewal the key would be free after the first
			long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3000);
			int duplicates = 0;
			while (System.nanoTime() < until) {
				assertThat(http.postWithKey("/t/slow", key, "{}").statusCode()).isEqualTo(409);
				duplicates++;
			}
			assertThat(duplicates).isPositive();
			this.executions.releaseHandlers();
			HttpResponse<byte[]> original = first.get(30, TimeUnit.SECONDS);
			assertThat(original.statusCode()).isEqualTo(200);
			HttpResponse<byte[]> replay = http.postWithKey("/t/slow", key, "{}");
			assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(replay.body()).isEqualTo(original.body());
			assertThat(this.executions.count("slow")).isEqualTo(1);
		}
		finally {
			this.executions.releaseHandlers();
			executor.shutdownNow();
		}
	}

}
