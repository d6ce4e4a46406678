package dev.idempo.web;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.LockingStore;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.StreamedBodyHttpContract.StreamedController;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Streamed request bodies on the Redis store, against the server {@link TestRedis}
 * resolves, with short leases (600 ms): the lease of a request is renewed while what its
 * handler left of a slow body is read, after the handler.
 *
 * @author idempo
 */
@TestPropertySource(properties = { "idempo.store.type=redis", "idempo.lock-ttl=600ms" })
class RedisStreamedBodyHttpTests extends StreamedBodyHttpContract {

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

	/**
	 * The handler reads ten bytes and returns; the client sends the rest of its body over
	 * two seconds (more than three leases). The key stays claimed while the rest is read:
	 * a duplicate meanwhile gets 409, and the response is stored and replayed, the
	 * handler having run once.
	 */
	@Test
	void theLeaseIsRenewedWhileTheRestOfASlowBodyIsRead() throws Exception {
		String key = TestHttp.newKey();
		byte[] body = body(16 * 1024, 8);
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			socket.setSoTimeout(30_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /streamed/partial HTTP/1.1\r\nHost: 127.0.0.1:" + this.port
					+ "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + body.length
					+ "\r\nConnection: close\r\nIdempotency-Key: " + key + "\r\n\r\n")
				.getBytes(StandardCharsets.ISO_8859_1));
			out.write(body, 0, 1024);
			out.flush();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (StreamedController.executions(key) == 0 && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			assertThat(StreamedController.executions(key)).isEqualTo(1);
			int chunk = (body.length - 1024) / 8;
			for (int i = 0; i < 8; i++) {
				// paces the client: the body arrives over two seconds
				Thread.sleep(250);
				int offset = 1024 + i * chunk;
				out.write(body, offset, (i == 7) ? body.length - offset : chunk);
				out.flush();
				if (i == 4) {
					assertThat(post("/streamed/partial", key, body, false).statusCode()).as("still held")
						.isEqualTo(409);
				}
			}
			String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
			assertThat(answer).startsWith("HTTP/1.1 200");
		}
		HttpResponse<byte[]> retry = post("/streamed/partial", key, body, false);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(StreamedController.executions(key)).isEqualTo(1);
	}

	@Test
	void runsOnTheRedisStore(@Autowired LockingStore store) {
		assertThat(store).isInstanceOf(RedisLockingStore.class);
	}

}
