package dev.idempo.web;

import java.io.ByteArrayInputStream;
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
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.core.Digests;
import dev.idempo.core.RequestFingerprints;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.Ordered;
import org.springframework.http.ResponseEntity;
import org.springframework.mock.web.DelegatingServletInputStream;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bodies of declared length stream to the handler: the key is claimed before the body is
 * read, a request meeting its key in progress gets 409 without its body being read, a
 * fresh one is digested as the handler reads it (and what the handler left unread is
 * digested before the response is stored), and a retry after completion is digested as it
 * is discarded, then replayed or answered 422. A body sent chunked (held whole, since its
 * length is unknown) has the same fingerprint as the same bytes streamed. Each store has
 * a subclass.
 *
 * @author idempo
 */
@SpringBootTest(
		classes = { HttpTestApplication.class, StreamedBodyHttpContract.StreamedController.class,
				StreamedBodyHttpContract.DoublingFilter.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempo.max-request-size=4MB")
public abstract class StreamedBodyHttpContract {

	private static final int LARGE = 2 * 1024 * 1024;

	@LocalServerPort
	int port;

	@Autowired
	LockingStore store;

	@Autowired
	CallerScopeResolver callerScopes;

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(10))
		.build();

	@BeforeEach
	void reset() {
		StreamedController.reset();
	}

	@Test
	void aStreamedFirstRequestIsReplayedByteForByteAndTheHandlerSawTheWholeBody() {
		String key = TestHttp.newKey();
		byte[] body = body(LARGE, 1);
		HttpResponse<byte[]> first = post("/streamed/upload", key, body, false);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(TestHttp.text(first)).contains("\"bytes\":" + LARGE);
		HttpResponse<byte[]> retry = post("/streamed/upload", key, body, false);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(StreamedController.executions(key)).isEqualTo(1);
	}

	@Test
	void aRetryWithAnotherBodyAfterCompletionIs422AndDoesNotRunTheHandler() {
		String key = TestHttp.newKey();
		byte[] body = body(LARGE, 2);
		assertThat(post("/streamed/upload", key, body, false).statusCode()).isEqualTo(201);
		byte[] lastByteDiffers = body.clone();
		lastByteDiffers[LARGE - 1]++;
		byte[] longer = Arrays.copyOf(body, LARGE + 1);
		for (byte[] other : new byte[][] { lastByteDiffers, longer, new byte[0] }) {
			HttpResponse<byte[]> reused = post("/streamed/upload", key, other, false);
			assertThat(reused.statusCode()).as(TestHttp.text(reused)).isEqualTo(422);
			assertThat(TestHttp.text(reused)).contains("https://idempo.dev/problems/key-reused");
		}
		assertThat(post("/streamed/upload", key, body, false).headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
		assertThat(StreamedController.executions(key)).isEqualTo(1);
	}

	/**
	 * The handler reads ten bytes; the rest is digested before the response is stored, so
	 * a retry differing only at the end is 422.
	 */
	@Test
	void whatTheHandlerLeftUnreadIsPartOfTheFingerprint() {
		String key = TestHttp.newKey();
		byte[] body = body(LARGE, 3);
		HttpResponse<byte[]> first = post("/streamed/partial", key, body, false);
		assertThat(first.statusCode()).isEqualTo(200);
		byte[] tailDiffers = body.clone();
		tailDiffers[LARGE - 1]++;
		assertThat(post("/streamed/partial", key, tailDiffers, false).statusCode()).isEqualTo(422);
		HttpResponse<byte[]> retry = post("/streamed/partial", key, body, false);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(StreamedController.executions(key)).isEqualTo(1);
	}

	/**
	 * A chunked body (no {@code Content-Length}) is held whole to fingerprint it; its
	 * fingerprint is that of the same bytes streamed, so a retry that changes the framing
	 * replays, whichever came first.
	 */
	@Test
	void aChunkedBodyAndTheSameBytesStreamedHaveOneFingerprint() {
		byte[] body = body(256 * 1024, 4);
		String chunkedFirst = TestHttp.newKey();
		HttpResponse<byte[]> first = post("/streamed/upload", chunkedFirst, body, true);
		assertThat(first.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> streamedRetry = post("/streamed/upload", chunkedFirst, body, false);
		assertThat(streamedRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(streamedRetry.body()).isEqualTo(first.body());
		String streamedFirst = TestHttp.newKey();
		HttpResponse<byte[]> second = post("/streamed/upload", streamedFirst, body, false);
		HttpResponse<byte[]> chunkedRetry = post("/streamed/upload", streamedFirst, body, true);
		assertThat(chunkedRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(chunkedRetry.body()).isEqualTo(second.body());
		byte[] other = body.clone();
		other[0]++;
		assertThat(post("/streamed/upload", streamedFirst, other, true).statusCode()).isEqualTo(422);
		assertThat(StreamedController.executions(chunkedFirst)).isEqualTo(1);
		assertThat(StreamedController.executions(streamedFirst)).isEqualTo(1);
	}

	/**
	 * While the first request runs, a duplicate that sends its headers and only the start
	 * of an 8 MB body gets 409 at once: its body is never read (reading it would wait for
	 * bytes that never come).
	 */
	@Test
	void aDuplicateInProgressIs409WithoutItsBodyBeingRead() throws Exception {
		String key = TestHttp.newKey();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor
				.submit(() -> post("/streamed/held", key, body(1024, 5), false));
			assertThat(StreamedController.entered.await(30, TimeUnit.SECONDS)).isTrue();
			String answer = sendPartially("/streamed/held", key, 3 * 1024 * 1024, 1024);
			assertThat(answer).startsWith("HTTP/1.1 409");
			assertThat(answer).contains("https://idempo.dev/problems/request-in-progress");
			StreamedController.release.countDown();
			assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
			assertThat(StreamedController.executions(key)).isEqualTo(1);
		}
		finally {
			StreamedController.release.countDown();
			executor.shutdownNow();
		}
	}

	/**
	 * A client that declares a body and stops after part of it, to a handler that reads
	 * only ten bytes: the handler ran before the end of the body was known, and the body
	 * ends short when the rest is read for the fingerprint (the client gets the
	 * container's answer). The handler's response is stored under the ten bytes it read:
	 * the whole request (same length, same first bytes) replays it, another body gets
	 * 422, and the handler never runs a second time.
	 */
	@Test
	void aBodyCutShortAfterTheHandlerRanReplaysToTheRetryThatStartsWithWhatTheHandlerRead() throws Exception {
		String key = TestHttp.newKey();
		// the client sees the container's answer to the broken body (400)
		assertThat(sendPartially("/streamed/partial", key, 64 * 1024, 1024)).startsWith("HTTP/1.1 4");
		assertThat(StreamedController.executions(key)).isEqualTo(1);
		assertThat(storedFingerprint(key)).startsWith("partial-body:10:");
		HttpResponse<byte[]> whole = post("/streamed/partial", key, new byte[64 * 1024], false);
		assertThat(whole.statusCode()).as(TestHttp.text(whole)).isEqualTo(200);
		assertThat(whole.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(TestHttp.text(whole)).contains("\"execution\":1");
		HttpResponse<byte[]> other = post("/streamed/partial", key, body(64 * 1024, 6), false);
		assertThat(other.statusCode()).as(TestHttp.text(other)).isEqualTo(422);
		assertThat(TestHttp.text(other)).contains("https://idempo.dev/problems/key-reused");
		HttpResponse<byte[]> shorter = post("/streamed/partial", key, new byte[1024], false);
		assertThat(shorter.statusCode()).isEqualTo(422);
		assertThat(StreamedController.executions(key)).isEqualTo(1);
	}

	/**
	 * A client that stops sending while the handler reads its body: the handler's read
	 * fails, nothing is stored and the key is released (as when a handler throws), so the
	 * complete request runs the handler.
	 */
	@Test
	void aBodyCutWhileTheHandlerReadsItReleasesTheKey() throws Exception {
		String key = TestHttp.newKey();
		assertThat(sendPartially("/streamed/upload", key, 64 * 1024, 1024)).startsWith("HTTP/1.1 ");
		assertThat(this.store.inspect(storageKey(key)).record()).isNull();
		HttpResponse<byte[]> whole = post("/streamed/upload", key, body(64 * 1024, 12), false);
		assertThat(whole.statusCode()).as(TestHttp.text(whole)).isEqualTo(201);
		assertThat(whole.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(StreamedController.executions(key)).isEqualTo(1);
	}

	/**
	 * A filter before idempo's rewrites the body (here: sends every byte twice) without
	 * changing its declared length: the handler reads the rewritten body, the retry
	 * replays, and another body gets 422.
	 */
	@Test
	void aBodyThatAFilterRewritesWithoutChangingItsDeclaredLengthIsReplayed() {
		String key = TestHttp.newKey();
		byte[] body = body(100_000, 8);
		HttpResponse<byte[]> first = post("/streamed/upload?rewrite=double", key, body, false);
		assertThat(first.statusCode()).as(TestHttp.text(first)).isEqualTo(201);
		assertThat(TestHttp.text(first)).contains("\"bytes\":200000");
		byte[] doubled = new byte[body.length * 2];
		for (int i = 0; i < body.length; i++) {
			doubled[2 * i] = body[i];
			doubled[2 * i + 1] = body[i];
		}
		MessageDigest asRead = RequestFingerprints.streamed("POST", "/streamed/upload", "rewrite=double", body.length);
		asRead.update(doubled);
		assertThat(storedFingerprint(key)).isEqualTo(Digests.hex(asRead));
		HttpResponse<byte[]> retry = post("/streamed/upload?rewrite=double", key, body, false);
		assertThat(retry.statusCode()).as(TestHttp.text(retry)).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		HttpResponse<byte[]> other = post("/streamed/upload?rewrite=double", key, body(100_000, 9), false);
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(StreamedController.executions(key)).isEqualTo(1);
	}

	/**
	 * A handler that reads its body without blocking (a {@code ReadListener}) reads all
	 * of it: the response is stored under the whole body's fingerprint and the retry
	 * replays it.
	 */
	@Test
	void aBodyReadThroughAReadListenerIsFingerprintedWholeAndReplayed() {
		String key = TestHttp.newKey();
		byte[] body = body(300_000, 10);
		HttpResponse<byte[]> first = post("/streamed/non-blocking", key, body, false);
		assertThat(first.statusCode()).as(TestHttp.text(first)).isEqualTo(200);
		assertThat(TestHttp.text(first)).contains("\"bytes\":300000");
		assertThat(storedFingerprint(key))
			.isEqualTo(RequestFingerprints.of("POST", "/streamed/non-blocking", null, body));
		HttpResponse<byte[]> retry = post("/streamed/non-blocking", key, body, false);
		assertThat(retry.statusCode()).as(TestHttp.text(retry)).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(StreamedController.executions(key)).isEqualTo(1);
	}

	/**
	 * A declared body above {@code idempo.max-request-size} is 413 before the key is
	 * claimed and the handler never runs; the key stays free.
	 */
	@Test
	void aDeclaredBodyAboveTheLimitIs413AndClaimsNothing() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> tooLarge = post("/streamed/upload", key, body(4 * 1024 * 1024 + 1, 7), false);
		assertThat(tooLarge.statusCode()).isEqualTo(413);
		assertThat(TestHttp.text(tooLarge)).contains("https://idempo.dev/problems/request-too-large");
		assertThat(StreamedController.executions(key)).isZero();
		HttpResponse<byte[]> small = post("/streamed/upload", key, body(10, 7), false);
		assertThat(small.statusCode()).isEqualTo(201);
		assertThat(small.headers().firstValue("Idempotent-Replayed")).isEmpty();
	}

	String storageKey(String key) {
		return RequestFingerprint.storageKey(this.callerScopes.resolve(new MockHttpServletRequest()), key);
	}

	String storedFingerprint(String key) {
		StoredRecord record = this.store.inspect(storageKey(key)).record();
		assertThat(record).as("the record of %s", key).isNotNull();
		return record.fingerprint();
	}

	/**
	 * Sends the headers of a POST declaring {@code declared} bytes and only {@code sent}
	 * of them, then stops sending, and reads what comes back until the server closes the
	 * connection or 20 seconds pass.
	 */
	private String sendPartially(String path, String key, int declared, int sent) throws IOException {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			socket.setSoTimeout(20_000);
			String head = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + this.port
					+ "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + declared
					+ "\r\nConnection: close\r\nIdempotency-Key: " + key + "\r\n\r\n";
			OutputStream out = socket.getOutputStream();
			out.write(head.getBytes(StandardCharsets.ISO_8859_1));
			out.write(new byte[sent]);
			out.flush();
			socket.shutdownOutput();
			ByteArrayOutputStream response = new ByteArrayOutputStream();
			InputStream in = socket.getInputStream();
			byte[] chunk = new byte[8192];
			try {
				int read;
				while ((read = in.read(chunk)) >= 0) {
					response.write(chunk, 0, read);
				}
			}
			catch (IOException ex) {
				// reset after the answer: what arrived is what counts
			}
			return response.toString(StandardCharsets.ISO_8859_1);
		}
	}

	HttpResponse<byte[]> post(String path, String key, byte[] body, boolean chunked) {
		HttpRequest.BodyPublisher publisher = chunked
				? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))
				: HttpRequest.BodyPublishers.ofByteArray(body);
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(60))
			.header("Content-Type", "application/octet-stream")
			.header("Idempotency-Key", key)
			.POST(publisher)
			.build();
		try {
			return this.client.send(request, HttpResponse.BodyHandlers.ofByteArray());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static byte[] body(int size, int seed) {
		byte[] body = new byte[size];
		for (int i = 0; i < size; i++) {
			body[i] = (byte) (i * 31 + seed);
		}
		return body;
	}

	/** Handlers that read their bodies as streams, counting executions per key. */
	@RestController
	@RequestMapping("/streamed")
	static class StreamedController {

		private static final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

		static volatile CountDownLatch entered = new CountDownLatch(1);

		static volatile CountDownLatch release = new CountDownLatch(1);

		static void reset() {
			entered = new CountDownLatch(1);
			release = new CountDownLatch(1);
		}

		static int executions(String key) {
			AtomicInteger count = executions.get(key);
			return (count != null) ? count.get() : 0;
		}

		private static int executed(String key) {
			return executions.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@PostMapping("/upload")
		@Idempotent
		ResponseEntity<Map<String, Object>> upload(HttpServletRequest request,
				@RequestHeader("Idempotency-Key") String key) throws IOException {
			long bytes = request.getInputStream().transferTo(OutputStream.nullOutputStream());
			return ResponseEntity.status(201)
				.body(Map.of("bytes", bytes, "execution", executed(key), "nonce", UUID.randomUUID().toString()));
		}

		@PostMapping("/partial")
		@Idempotent
		Map<String, Object> partial(HttpServletRequest request, @RequestHeader("Idempotency-Key") String key)
				throws IOException {
			byte[] start = request.getInputStream().readNBytes(10);
			return Map.of("start", Arrays.toString(start), "execution", executed(key), "nonce",
					UUID.randomUUID().toString());
		}

		@PostMapping("/non-blocking")
		@Idempotent
		Callable<Map<String, Object>> nonBlocking(HttpServletRequest request,
				@RequestHeader("Idempotency-Key") String key) {
			return () -> {
				// the request is asynchronous now: its body may be read without blocking
				ServletInputStream in = request.getInputStream();
				CompletableFuture<Long> read = new CompletableFuture<>();
				in.setReadListener(new CountingReadListener(in, read));
				long bytes = read.get(30, TimeUnit.SECONDS);
				return Map.of("bytes", bytes, "execution", executed(key), "nonce", UUID.randomUUID().toString());
			};
		}

		@PostMapping("/held")
		@Idempotent
		Map<String, Object> held(HttpServletRequest request, @RequestHeader("Idempotency-Key") String key)
				throws Exception {
			int execution = executed(key);
			entered.countDown();
			release.await(30, TimeUnit.SECONDS);
			long bytes = request.getInputStream().transferTo(OutputStream.nullOutputStream());
			return Map.of("bytes", bytes, "execution", execution);
		}

	}

	/** Reads a body without blocking, counting its bytes. */
	static final class CountingReadListener implements ReadListener {

		private final ServletInputStream in;

		private final CompletableFuture<Long> read;

		private final byte[] buffer = new byte[8192];

		private long count;

		CountingReadListener(ServletInputStream in, CompletableFuture<Long> read) {
			this.in = in;
			this.read = read;
		}

		@Override
		public void onDataAvailable() throws IOException {
			while (this.in.isReady() && !this.in.isFinished()) {
				int n = this.in.read(this.buffer);
				if (n > 0) {
					this.count += n;
				}
			}
		}

		@Override
		public void onAllDataRead() {
			this.read.complete(this.count);
		}

		@Override
		public void onError(Throwable failure) {
			this.read.completeExceptionally(failure);
		}

	}

	/**
	 * Before idempo's filter, on {@code ?rewrite=double}: the body the application reads
	 * has every byte twice, its declared length unchanged (as a filter that decodes a
	 * body may leave it).
	 */
	static final class DoublingFilter extends OncePerRequestFilter implements Ordered {

		@Override
		public int getOrder() {
			return -100;
		}

		@Override
		protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
				throws ServletException, IOException {
			if (!"double".equals(request.getParameter("rewrite"))) {
				chain.doFilter(request, response);
				return;
			}
			byte[] sent = request.getInputStream().readAllBytes();
			byte[] doubled = new byte[sent.length * 2];
			for (int i = 0; i < sent.length; i++) {
				doubled[2 * i] = sent[i];
				doubled[2 * i + 1] = sent[i];
			}
			chain.doFilter(new HttpServletRequestWrapper(request) {
				@Override
				public ServletInputStream getInputStream() {
					return new DelegatingServletInputStream(new ByteArrayInputStream(doubled));
				}
			}, response);
		}

	}

}
