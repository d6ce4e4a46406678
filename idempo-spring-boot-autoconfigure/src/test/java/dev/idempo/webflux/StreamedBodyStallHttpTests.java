package dev.idempo.webflux;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.TestHttp;
import dev.idempo.webflux.WebFluxStreamedBodyHttpContract.RawRequest;
import dev.idempo.webflux.WebFluxStreamedBodyHttpContract.StreamedController;
import dev.idempo.webflux.testapp.WebFluxTestApplication;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a streamed body does at the edges of the HTTP exchange, on Reactor Netty with the
 * Redis store (short leases, 600 ms) and BlockHound: a client silent mid-body fails its
 * body after {@code idempo.request-body-timeout} (408) and frees its key.
 */
@SpringBootTest(classes = { WebFluxTestApplication.class, WebFluxStreamedBodyHttpContract.StreamedController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempo.max-request-size=4MB",
				"idempo.store.type=redis", "idempo.lock-ttl=600ms", "idempo.request-body-timeout=2s" })
class StreamedBodyStallHttpTests {

	private static final String KEY_PREFIX = "idempo-stall:" + UUID.randomUUID().toString().replace("-", "") + ":";

	@LocalServerPort
	int port;

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(10))
		.build();

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
	 * A client whose connection goes silent in the middle of its body (a half-open
	 * connection: the client's network went away, no FIN or RST reaches the server) holds
	 * its key for as long as the server keeps the connection: Reactor Netty has no read
	 * timeout by default, and the lease is renewed all along. Ten leases later, the
	 * client's complete retry with the same key still gets 409 (and would for ever). On
	 * main the body was read before the claim, so the stalled request held nothing and
	 * the retry ran; on Spring MVC the container's read timeout ends the request. With
	 * {@code idempo.request-body-timeout} (here 2s), the silent body fails with 408 once
	 * no byte came for that long, the key is released, and the retry runs.
	 */
	@Test
	void aClientSilentMidBodyDoesNotHoldItsKeyForEver() throws Exception {
		String key = TestHttp.newKey();
		byte[] body = WebFluxStreamedBodyHttpContract.body(64 * 1024, 21);
		try (RawRequest stalled = new RawRequest(this.port, "/streamed/upload", key, body.length)) {
			stalled.send(java.util.Arrays.copyOf(body, 1024));
			Thread.sleep(6000);
			HttpResponse<byte[]> retry = post("/streamed/upload", key, body);
			assertThat(retry.statusCode())
				.as("the retry, ten leases after its first attempt went silent: %s", TestHttp.text(retry))
				.isNotEqualTo(409);
			assertThat(stalled.response()).as("the silent client's answer").startsWith("HTTP/1.1 408");
		}
		assertThat(StreamedController.runs(key)).isEqualTo(2);
	}

	/**
	 * {@code Expect: 100-continue}: a handler that never reads its body; the flow's read
	 * of the body after the handler has Reactor Netty send 100 Continue, the record is
	 * stored, and a retry (also expecting 100) is replayed.
	 */
	@Test
	void aBodySentAfter100ContinueIsStoredAndReplayed() throws Exception {
		String key = TestHttp.newKey();
		byte[] body = WebFluxStreamedBodyHttpContract.body(100_000, 22);
		String first = expectContinue("/streamed/ignores", key, body);
		assertThat(first).startsWith("HTTP/1.1 100").contains("HTTP/1.1 200");
		String retry = expectContinue("/streamed/ignores", key, body);
		assertThat(retry).contains("Idempotent-Replayed: true");
		assertThat(StreamedController.runs(key)).isEqualTo(1);
	}

	/**
	 * An empty body with {@code Content-Length: 0} (streamed) and the same empty body
	 * chunked (held whole) share a fingerprint.
	 */
	@Test
	void anEmptyBodyDeclaredAndChunkedShareAFingerprint() throws Exception {
		String key = TestHttp.newKey();
		String first = raw("/streamed/ignores?a=1", key, "Content-Length: 0\r\n", "");
		assertThat(first).startsWith("HTTP/1.1 200");
		String retry = raw("/streamed/ignores?a=1", key, "Transfer-Encoding: chunked\r\n", "0\r\n\r\n");
		assertThat(retry).startsWith("HTTP/1.1 200").contains("Idempotent-Replayed: true");
		assertThat(raw("/streamed/ignores?a=2", key, "Content-Length: 0\r\n", "")).startsWith("HTTP/1.1 422");
	}

	/**
	 * A duplicate sent with {@code Expect: 100-continue} meets its key in progress: 409
	 * without its body being read (and so without 100 Continue). The client does not send
	 * the body; on a connection kept alive, its next request must be read as a request,
	 * not as the unread body of the first.
	 */
	@Test
	void aDuplicateExpecting100Gets409AndTheConnectionStaysSound() throws Exception {
		String key = TestHttp.newKey();
		StreamedController.release = new java.util.concurrent.CompletableFuture<>();
		java.util.concurrent.CompletableFuture<HttpResponse<byte[]>> first = this.client
			.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/streamed/held"))
				.header("Content-Type", "application/octet-stream")
				.header("Idempotency-Key", key)
				.POST(HttpRequest.BodyPublishers.ofByteArray(new byte[16]))
				.build(), HttpResponse.BodyHandlers.ofByteArray());
		try {
			StreamedController.entered(key).get(30, java.util.concurrent.TimeUnit.SECONDS);
			try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
				socket.setSoTimeout(20_000);
				OutputStream out = socket.getOutputStream();
				out.write(("POST /streamed/held HTTP/1.1\r\nHost: 127.0.0.1\r\n"
						+ "Content-Type: application/octet-stream\r\nContent-Length: 40\r\nExpect: 100-continue\r\n"
						+ "Idempotency-Key: " + key + "\r\n\r\n")
					.getBytes(StandardCharsets.ISO_8859_1));
				out.flush();
				InputStream in = socket.getInputStream();
				String head = head(in);
				assertThat(head).startsWith("HTTP/1.1 409");
				in.readNBytes(contentLength(head));
				if (head.toLowerCase(java.util.Locale.ROOT).contains("connection: close")) {
					return;
				}
				String other = TestHttp.newKey();
				out.write(("POST /streamed/ignores HTTP/1.1\r\nHost: 127.0.0.1\r\n"
						+ "Content-Type: application/octet-stream\r\nContent-Length: 0\r\n" + "Idempotency-Key: "
						+ other + "\r\n\r\n")
					.getBytes(StandardCharsets.ISO_8859_1));
				out.flush();
				String next;
				try {
					next = head(in);
				}
				catch (java.net.SocketTimeoutException ex) {
					next = "no answer: " + ex;
				}
				assertThat(next).as("the next request on the connection").startsWith("HTTP/1.1 200");
			}
		}
		finally {
			StreamedController.release.complete(null);
			first.get(30, java.util.concurrent.TimeUnit.SECONDS);
		}
	}

	private static String head(InputStream in) throws IOException {
		ByteArrayOutputStream seen = new ByteArrayOutputStream();
		while (!seen.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
			int next = in.read();
			if (next < 0) {
				break;
			}
			seen.write(next);
		}
		return seen.toString(StandardCharsets.ISO_8859_1);
	}

	private static int contentLength(String head) {
		for (String line : head.split("\r\n")) {
			if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
				return Integer.parseInt(line.substring("content-length:".length()).trim());
			}
		}
		return 0;
	}

	private String expectContinue(String path, String key, byte[] body) throws IOException {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			socket.setSoTimeout(20_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
					+ "Content-Length: " + body.length + "\r\nExpect: 100-continue\r\nConnection: close\r\n"
					+ "Idempotency-Key: " + key + "\r\n\r\n")
				.getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			InputStream in = socket.getInputStream();
			ByteArrayOutputStream seen = new ByteArrayOutputStream();
			while (!seen.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
				int next = in.read();
				if (next < 0) {
					return seen.toString(StandardCharsets.ISO_8859_1);
				}
				seen.write(next);
			}
			if (seen.toString(StandardCharsets.ISO_8859_1).startsWith("HTTP/1.1 100")) {
				out.write(body);
				out.flush();
			}
			seen.write(in.readAllBytes());
			return seen.toString(StandardCharsets.ISO_8859_1);
		}
	}

	private String raw(String path, String key, String framing, String body) throws IOException {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			socket.setSoTimeout(20_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
					+ framing + "Connection: close\r\nIdempotency-Key: " + key + "\r\n\r\n" + body)
				.getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
		}
	}

	private HttpResponse<byte[]> post(String path, String key, byte[] body) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/octet-stream")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofByteArray(body))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofByteArray());
	}

}
