package dev.idempo.webflux;

import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.redis.ReactiveRedisLockingStore;
import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.TestHttp;
import dev.idempo.webflux.testapp.SwitchableReactiveStore;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Streamed request bodies on WebFlux, on the reactive Redis store, against the server
 * {@link TestRedis} resolves, with short leases (600 ms): the lease of a request is
 * renewed while what its handler left of a slow body is read, after the handler.
 *
 * @author idempo
 */
@TestPropertySource(properties = { "idempo.store.type=redis", "idempo.lock-ttl=600ms" })
class RedisWebFluxStreamedBodyHttpTests extends WebFluxStreamedBodyHttpContract {

	private static final String KEY_PREFIX = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

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
	void runsOnTheReactiveRedisStore(@Autowired SwitchableReactiveStore store) {
		assertThat(store.delegate()).isInstanceOf(ReactiveRedisLockingStore.class);
	}

	/**
	 * The handler reads the first bytes and answers; the client sends the rest of its
	 * body over two seconds (more than three leases). The key stays claimed while the
	 * rest is read: a duplicate meanwhile gets 409, and the response is stored and
	 * replayed, the handler having run once.
	 */
	@Test
	void theLeaseIsRenewedWhileTheRestOfASlowBodyIsRead() throws Exception {
		String key = TestHttp.newKey();
		byte[] body = body(16 * 1024, 8);
		try (RawRequest request = new RawRequest(this.port, "/streamed/partial", key, body.length)) {
			request.send(Arrays.copyOf(body, 1024));
			StreamedController.answered(key).get(30, TimeUnit.SECONDS);
			int chunk = (body.length - 1024) / 8;
			for (int i = 0; i < 8; i++) {
				// paces the client: the body arrives over two seconds
				Thread.sleep(250);
				int offset = 1024 + i * chunk;
				request.send(Arrays.copyOfRange(body, offset, (i == 7) ? body.length : offset + chunk));
				if (i == 4) {
					assertThat(post("/streamed/partial", key, body, false).statusCode()).as("still held")
						.isEqualTo(409);
				}
			}
			assertThat(request.response()).startsWith("HTTP/1.1 200");
		}
		HttpResponse<byte[]> retry = post("/streamed/partial", key, body, false);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(StreamedController.runs(key)).isEqualTo(1);
		assertReleased(key);
	}

}
