package dev.idempo.webflux;

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
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;
import dev.idempo.core.RequestFingerprints;
import dev.idempo.core.StorageKeys;
import dev.idempo.store.LockingStore;
import dev.idempo.store.RecordState;
import dev.idempo.store.StoredRecord;
import dev.idempo.web.TestHttp;
import dev.idempo.webflux.testapp.WebFluxTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DataBufferWrapper;
import org.springframework.core.io.buffer.PooledDataBuffer;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bodies of declared length stream to WebFlux handlers, as on Spring MVC
 * ({@code StreamedBodyHttpContract}), on Reactor Netty with BlockHound installed: the key
 * is claimed before the body is read, so a handler runs while its body is still arriving;
 * a request meeting its key in progress gets 409 without its body being read; what a
 * handler left unread (or never read) is digested before the response is stored, and the
 * record's fingerprint is the one the same body held whole gets, so a retry replays,
 * another body of the same length gets 422, and a chunked retry of the same bytes
 * replays; a body that fails (the client went away) stores nothing and releases the key.
 * Every body buffer the server delivered is released. Each store has a subclass.
 *
 * @author idempo
 */
@SpringBootTest(
		classes = { WebFluxTestApplication.class, WebFluxStreamedBodyHttpContract.StreamedController.class,
				WebFluxStreamedBodyHttpContract.BufferTracker.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempo.max-request-size=4MB" })
abstract class WebFluxStreamedBodyHttpContract {

	static final int LARGE = 2 * 1024 * 1024;

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	@LocalServerPort
	int port;

	@Autowired
	LockingStore store;

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(10))
		.build();

	@BeforeEach
	void reset() {
		StreamedController.release = new CompletableFuture<>();
	}

	/**
	 * The handler runs while the body is still arriving (the key claimed first), reads it
	 * all, and its response is replayed to a retry; a retry whose last byte differs gets
	 * 422, the handler having run once.
	 */
	@Test
	void aStreamedRequestRunsBeforeItsBodyArrivedAndIsReplayedWhileAnotherBodyIs422() throws Exception {
		String key = TestHttp.newKey();
		byte[] body = body(LARGE, 1);
		String first = sendInTwoParts("/streamed/upload", key, body, 1024,
				() -> StreamedController.entered(key).isDone());
		assertThat(first).startsWith("HTTP/1.1 201").contains("\"bytes\":" + LARGE);
		assertThat(storedFingerprint(key)).isEqualTo(RequestFingerprints.of("POST", "/streamed/upload", null, body));
		assertReleased(key);
		HttpResponse<byte[]> retry = post("/streamed/upload", key, body, false);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(TestHttp.text(retry)).isEqualTo(first.substring(first.indexOf("\r\n\r\n") + 4));
		byte[] lastByteDiffers = body.clone();
		lastByteDiffers[LARGE - 1]++;
		HttpResponse<byte[]> reused = post("/streamed/upload", key, lastByteDiffers, false);
		assertThat(reused.statusCode()).as(TestHttp.text(reused)).isEqualTo(422);
		assertThat(TestHttp.text(reused)).contains("https://idempo.dev/problems/key-reused");
		assertThat(StreamedController.runs(key)).isEqualTo(1);
		assertReleased(key);
	}

	/**
	 * While the first request runs, a duplicate that sends its headers and only the start
	 * of a 3 MB body gets 409 at once: its body is never read (reading it would wait for
	 * bytes that never come).
	 */
	@Test
	void aDuplicateInProgressIs409WithoutItsBodyBeingRead() throws Exception {
		String key = TestHttp.newKey();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor
				.submit(() -> post("/streamed/held", key, body(1024, 5), false));
			StreamedController.entered(key).get(30, TimeUnit.SECONDS);
			try (RawRequest duplicate = new RawRequest(this.port, "/streamed/held", key, 3 * 1024 * 1024)) {
				duplicate.send(new byte[1024]);
				String answer = duplicate.response();
				assertThat(answer).startsWith("HTTP/1.1 409");
				assertThat(answer).contains("https://idempo.dev/problems/request-in-progress");
			}
			StreamedController.release.complete(null);
			HttpResponse<byte[]> answered = first.get(30, TimeUnit.SECONDS);
			assertThat(answered.statusCode()).as(TestHttp.text(answered)).isEqualTo(200);
			assertThat(StreamedController.runs(key)).isEqualTo(1);
		}
		finally {
			StreamedController.release.complete(null);
			executor.shutdownNow();
		}
	}

	/**
	 * A handler that never subscribes to its body answers before the body arrived; the
	 * flow reads the body (releasing it) before the response is stored, under the whole
	 * body's fingerprint, which a retry of the same bytes matches, with
	 * {@code Content-Length} or chunked.
	 */
	@Test
	void aHandlerThatNeverReadsItsBodyStoresARecordThatItsRetryMatches() throws Exception {
		String key = TestHttp.newKey();
		byte[] body = body(300_000, 2);
		String first = sendInTwoParts("/streamed/ignores", key, body, 1024,
				() -> StreamedController.entered(key).isDone());
		assertThat(first).startsWith("HTTP/1.1 200");
		assertThat(storedFingerprint(key)).isEqualTo(RequestFingerprints.of("POST", "/streamed/ignores", null, body));
		assertReleased(key);
		for (boolean chunked : new boolean[] { false, true }) {
			HttpResponse<byte[]> retry = post("/streamed/ignores", key, body, chunked);
			assertThat(retry.statusCode()).isEqualTo(200);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		}
		assertThat(StreamedController.runs(key)).isEqualTo(1);
	}

	/**
	 * The handler reads the body's first buffer and answers while the rest is still
	 * arriving; the rest is read and digested after it, before the response is stored
	 * (the response waits for it), so a retry differing only at the end is 422 and the
	 * same body replays.
	 */
	@Test
	void whatAHandlerLeftUnreadIsReadBeforeItsResponseIsStoredAndIsPartOfTheFingerprint() throws Exception {
		String key = TestHttp.newKey();
		byte[] body = body(LARGE, 3);
		String first = sendInTwoParts("/streamed/partial", key, body, 1024,
				() -> StreamedController.answered(key).isDone());
		assertThat(first).startsWith("HTTP/1.1 200");
		assertThat(storedFingerprint(key)).isEqualTo(RequestFingerprints.of("POST", "/streamed/partial", null, body));
		assertReleased(key);
		byte[] tailDiffers = body.clone();
		tailDiffers[LARGE - 1]++;
		assertThat(post("/streamed/partial", key, tailDiffers, false).statusCode()).isEqualTo(422);
		HttpResponse<byte[]> retry = post("/streamed/partial", key, body, false);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(TestHttp.text(retry)).isEqualTo(first.substring(first.indexOf("\r\n\r\n") + 4));
		assertThat(StreamedController.runs(key)).isEqualTo(1);
	}

	/**
	 * The client goes away while the handler reads its body: nothing is stored and the
	 * key is released, so the complete request runs the handler.
	 */
	@Test
	void aClientThatGoesAwayWhileTheHandlerReadsTheBodyLeavesNothingStoredAndItsKeyFree() throws Exception {
		String key = TestHttp.newKey();
		try (RawRequest cut = new RawRequest(this.port, "/streamed/upload", key, 64 * 1024)) {
			cut.send(new byte[1024]);
			StreamedController.entered(key).get(30, TimeUnit.SECONDS);
		}
		assertFree(key);
		HttpResponse<byte[]> whole = post("/streamed/upload", key, body(64 * 1024, 12), false);
		assertThat(whole.statusCode()).as(TestHttp.text(whole)).isEqualTo(201);
		assertThat(whole.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(StreamedController.runs(key)).isEqualTo(2);
	}

	/**
	 * The handler answered on the body's first bytes, and the body then ends short of its
	 * declared length (the client stops sending, and goes away) while the flow reads the
	 * rest: the answer is not one to the request declared, so nothing is stored and the
	 * key is released (Spring MVC stores it under the bytes the handler read instead).
	 */
	@Test
	void aBodyThatEndsShortAfterTheHandlerAnsweredLeavesNothingStoredAndItsKeyFree() throws Exception {
		String key = TestHttp.newKey();
		try (RawRequest cut = new RawRequest(this.port, "/streamed/partial", key, 64 * 1024)) {
			cut.send(new byte[1024]);
			StreamedController.answered(key).get(30, TimeUnit.SECONDS);
			cut.shutdownOutput();
		}
		assertFree(key);
		assertReleased(key);
		HttpResponse<byte[]> whole = post("/streamed/partial", key, body(64 * 1024, 13), false);
		assertThat(whole.statusCode()).as(TestHttp.text(whole)).isEqualTo(200);
		assertThat(whole.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(StreamedController.runs(key)).isEqualTo(2);
	}

	/**
	 * A chunked body (no {@code Content-Length}) is held whole to fingerprint it, a body
	 * of declared length streams (its handler runs before it arrived): their fingerprints
	 * are one, so a retry that changes the framing replays, whichever came first.
	 */
	@Test
	void aChunkedBodyAndTheSameBytesStreamedHaveOneFingerprint() throws Exception {
		byte[] body = body(256 * 1024, 4);
		String chunkedFirst = TestHttp.newKey();
		HttpResponse<byte[]> first = post("/streamed/upload", chunkedFirst, body, true);
		assertThat(first.statusCode()).isEqualTo(201);
		String streamedRetry = sendInTwoParts("/streamed/upload", chunkedFirst, body, 1024, () -> true);
		assertThat(streamedRetry).startsWith("HTTP/1.1 201").contains("Idempotent-Replayed: true");
		assertThat(streamedRetry).endsWith(TestHttp.text(first));
		String streamedFirst = TestHttp.newKey();
		String second = sendInTwoParts("/streamed/upload", streamedFirst, body, 1024,
				() -> StreamedController.entered(streamedFirst).isDone());
		assertThat(second).startsWith("HTTP/1.1 201");
		HttpResponse<byte[]> chunkedRetry = post("/streamed/upload", streamedFirst, body, true);
		assertThat(chunkedRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(second).endsWith(TestHttp.text(chunkedRetry));
		byte[] other = body.clone();
		other[0]++;
		assertThat(post("/streamed/upload", streamedFirst, other, true).statusCode()).isEqualTo(422);
		assertThat(StreamedController.runs(chunkedFirst)).isEqualTo(1);
		assertThat(StreamedController.runs(streamedFirst)).isEqualTo(1);
	}

	String storageKey(String key) {
		return StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, key);
	}

	String storedFingerprint(String key) {
		StoredRecord record = this.store.inspect(storageKey(key)).record();
		assertThat(record).as("the record of %s", key).isNotNull();
		return record.fingerprint();
	}

	/** Waits until the key is neither held nor stored. */
	void assertFree(String key) {
		awaitTrue(() -> this.store.inspect(storageKey(key)).isAbsent(),
				() -> "the key is free: " + this.store.inspect(storageKey(key)));
		RecordState state = this.store.inspect(storageKey(key));
		assertThat(state.record()).isNull();
	}

	/**
	 * Every body buffer the server delivered for requests with {@code key} is released.
	 */
	static void assertReleased(String key) {
		List<TrackedBuffer> buffers = BufferTracker.buffers(key);
		assertThat(buffers).as("buffers delivered for %s", key).isNotEmpty();
		awaitTrue(() -> buffers.stream().allMatch(TrackedBuffer::isReleased), () -> "every body buffer released");
	}

	static void awaitTrue(BooleanSupplier condition, java.util.function.Supplier<String> what) {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as("%s, in time", what.get()).isLessThan(deadline);
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	/**
	 * Sends the headers of a POST with {@code body}'s length declared and its first
	 * {@code split} bytes, waits until {@code before} holds (the handler runs, its body
	 * not yet arrived), then sends the rest and reads the response.
	 */
	String sendInTwoParts(String path, String key, byte[] body, int split, BooleanSupplier before) throws IOException {
		try (RawRequest request = new RawRequest(this.port, path, key, body.length)) {
			request.send(Arrays.copyOf(body, split));
			awaitTrue(before, () -> "the handler ran before the body arrived");
			request.send(Arrays.copyOfRange(body, split, body.length));
			return request.response();
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

	/**
	 * A POST written on a socket: its headers (with {@code Content-Length} and
	 * {@code Connection: close}) at once, its body as the test sends it, and its response
	 * read to the end of its declared length.
	 */
	static final class RawRequest implements AutoCloseable {

		private final Socket socket;

		private final OutputStream out;

		RawRequest(int port, String path, String key, long declared) throws IOException {
			this.socket = new Socket(InetAddress.getLoopbackAddress(), port);
			this.socket.setSoTimeout((int) TIMEOUT.toMillis());
			this.out = this.socket.getOutputStream();
			this.out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port
					+ "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + declared
					+ "\r\nConnection: close\r\nIdempotency-Key: " + key + "\r\n\r\n")
				.getBytes(StandardCharsets.ISO_8859_1));
			this.out.flush();
		}

		void send(byte[] bytes) throws IOException {
			this.out.write(bytes);
			this.out.flush();
		}

		void shutdownOutput() throws IOException {
			this.socket.shutdownOutput();
		}

		/** The response's head and body (of its {@code Content-Length}). */
		String response() throws IOException {
			InputStream in = this.socket.getInputStream();
			ByteArrayOutputStream head = new ByteArrayOutputStream();
			while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
				int next = in.read();
				if (next < 0) {
					break;
				}
				head.write(next);
			}
			String text = head.toString(StandardCharsets.ISO_8859_1);
			long length = 0;
			for (String line : text.split("\r\n")) {
				if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
					length = Long.parseLong(line.substring("content-length:".length()).trim());
				}
			}
			byte[] body = in.readNBytes((int) length);
			return text + new String(body, StandardCharsets.ISO_8859_1);
		}

		@Override
		public void close() throws IOException {
			this.socket.close();
		}

	}

	/** Handlers that read their bodies as streams, counting their runs per key. */
	@RestController
	@RequestMapping("/streamed")
	static class StreamedController {

		private static final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private static final Map<String, CompletableFuture<Void>> entered = new ConcurrentHashMap<>();

		private static final Map<String, CompletableFuture<Void>> answered = new ConcurrentHashMap<>();

		static volatile CompletableFuture<Void> release = new CompletableFuture<>();

		static int runs(String key) {
			AtomicInteger count = runs.get(key);
			return (count != null) ? count.get() : 0;
		}

		static CompletableFuture<Void> entered(String key) {
			return entered.computeIfAbsent(key, (k) -> new CompletableFuture<>());
		}

		static CompletableFuture<Void> answered(String key) {
			return answered.computeIfAbsent(key, (k) -> new CompletableFuture<>());
		}

		private static int run(String key) {
			int run = runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			entered(key).complete(null);
			return run;
		}

		private static Map<String, Object> answer(String key, int run, Object read) {
			answered(key).complete(null);
			return Map.of("read", read, "execution", run, "nonce", UUID.randomUUID().toString());
		}

		@PostMapping("/upload")
		@Idempotent
		Mono<ResponseEntity<Map<String, Object>>> upload(ServerHttpRequest request,
				@RequestHeader("Idempotency-Key") String key) {
			int run = run(key);
			return request.getBody().map((buffer) -> {
				long bytes = buffer.readableByteCount();
				DataBufferUtils.release(buffer);
				return bytes;
			})
				.reduce(0L, Long::sum)
				.map((bytes) -> ResponseEntity.status(201)
					.body(Map.of("bytes", bytes, "execution", run, "nonce", UUID.randomUUID().toString())));
		}

		@PostMapping("/partial")
		@Idempotent
		Mono<Map<String, Object>> partial(ServerHttpRequest request, @RequestHeader("Idempotency-Key") String key) {
			int run = run(key);
			return request.getBody().next().map((first) -> {
				byte[] start = new byte[Math.min(10, first.readableByteCount())];
				first.read(start);
				DataBufferUtils.release(first);
				return answer(key, run, Arrays.toString(start));
			});
		}

		@PostMapping("/ignores")
		@Idempotent
		Map<String, Object> ignores(@RequestHeader("Idempotency-Key") String key) {
			return answer(key, run(key), "nothing");
		}

		@PostMapping("/held")
		@Idempotent
		Mono<Map<String, Object>> held(ServerHttpRequest request, @RequestHeader("Idempotency-Key") String key) {
			int run = run(key);
			return Mono.fromFuture(release).then(request.getBody().map((buffer) -> {
				long bytes = buffer.readableByteCount();
				DataBufferUtils.release(buffer);
				return bytes;
			}).reduce(0L, Long::sum)).map((bytes) -> answer(key, run, bytes));
		}

	}

	/**
	 * Before every other filter: wraps each buffer of a keyed request's body of declared
	 * length in one that counts its references (releasing it releases the server's
	 * buffer), so that a test can check that each was released. (Netty's own buffers are
	 * recycled once released, so their counts cannot be read afterwards.)
	 */
	static final class BufferTracker implements WebFilter, Ordered {

		private static final Map<String, List<TrackedBuffer>> buffers = new ConcurrentHashMap<>();

		static List<TrackedBuffer> buffers(String key) {
			return buffers.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>());
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
			String key = exchange.getRequest().getHeaders().getFirst("Idempotency-Key");
			if (key == null || exchange.getRequest().getHeaders().getContentLength() < 0) {
				return chain.filter(exchange);
			}
			List<TrackedBuffer> tracked = buffers(key);
			ServerHttpRequest request = new ServerHttpRequestDecorator(exchange.getRequest()) {

				@Override
				public Flux<DataBuffer> getBody() {
					return super.getBody().map((buffer) -> {
						TrackedBuffer counted = new TrackedBuffer(buffer);
						tracked.add(counted);
						return counted;
					});
				}

			};
			return chain.filter(exchange.mutate().request(request).build());
		}

	}

	/**
	 * A server's body buffer that counts its references; joining it hands its reference
	 * to the joined buffer (as joining Netty's buffers does).
	 */
	static final class TrackedBuffer extends DataBufferWrapper implements PooledDataBuffer {

		private final AtomicInteger references = new AtomicInteger(1);

		TrackedBuffer(DataBuffer delegate) {
			super(delegate);
		}

		@Override
		public DataBufferFactory factory() {
			DataBufferFactory factory = dataBuffer().factory();
			return new DataBufferFactory() {

				@Override
				@Deprecated
				public DataBuffer allocateBuffer() {
					return factory.allocateBuffer(256);
				}

				@Override
				public DataBuffer allocateBuffer(int initialCapacity) {
					return factory.allocateBuffer(initialCapacity);
				}

				@Override
				public DataBuffer wrap(ByteBuffer byteBuffer) {
					return factory.wrap(byteBuffer);
				}

				@Override
				public DataBuffer wrap(byte[] bytes) {
					return factory.wrap(bytes);
				}

				@Override
				public DataBuffer join(List<? extends DataBuffer> buffers) {
					return factory.join(buffers.stream().map((buffer) -> {
						if (buffer instanceof TrackedBuffer tracked) {
							tracked.references.decrementAndGet();
							return tracked.dataBuffer();
						}
						return buffer;
					}).toList());
				}

				@Override
				public boolean isDirect() {
					return factory.isDirect();
				}

			};
		}

		boolean isReleased() {
			return this.references.get() == 0;
		}

		@Override
		public boolean isAllocated() {
			return this.references.get() > 0;
		}

		@Override
		public PooledDataBuffer retain() {
			this.references.incrementAndGet();
			DataBufferUtils.retain(dataBuffer());
			return this;
		}

		@Override
		public PooledDataBuffer touch(Object hint) {
			DataBufferUtils.touch(dataBuffer(), hint);
			return this;
		}

		@Override
		public boolean release() {
			this.references.decrementAndGet();
			return DataBufferUtils.release(dataBuffer());
		}

	}

}
