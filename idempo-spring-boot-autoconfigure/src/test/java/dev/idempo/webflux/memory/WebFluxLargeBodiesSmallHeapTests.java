package dev.idempo.webflux.memory;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux counterpart of {@code LargeBodiesSmallHeapTests}: 64 concurrent 8 MB POSTs
 * with fresh keys to an idempotent handler of a WebFlux application (Reactor Netty) with
 * a 256 MB heap: their bodies (of declared length) stream to the handler and are
 * fingerprinted as they pass, nothing of them held, so every request succeeds exactly as
 * on a functional endpoint without keys, and the 64 concurrent retries (whose bodies are
 * read and discarded to compare them) replay; the application never runs out of memory,
 * and Netty's leak detection (paranoid) reports no body buffer left unreleased. Each
 * handler reads its body only once all 64 uploads reached their handlers, so that all are
 * in flight at once (bodies read whole before the claim, as before they streamed, take
 * 512 MB then, and never reach their handlers together).
 */
@Tag("chaos")
class WebFluxLargeBodiesSmallHeapTests {

	private static final int BODY = 8 * 1024 * 1024;

	private static final int CONCURRENT = 64;

	/** Counted for a replayed response. */
	private static final int REPLAYED = -201;

	private static Process process;

	private static int port;

	private static Path directory;

	private static Path log;

	@BeforeAll
	static void start() throws Exception {
		directory = Files.createTempDirectory("idempo-small-heap-webflux");
		Path portFile = directory.resolve("port");
		log = Path.of("target", "small-heap-webflux-" + System.currentTimeMillis() + ".log");
		Files.createDirectories(log.getParent());
		String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		List<String> command = List.of(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
				"-Dio.netty.leakDetection.level=paranoid", "-cp", classPath,
				SmallHeapWebFluxApplication.class.getName(), "--server.port=0",
				"--test.port-file=" + portFile.toAbsolutePath(), "--spring.main.web-application-type=reactive",
				"--spring.autoconfigure.exclude="
						+ "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
				"--idempo.store.type=memory", "--test.wave=" + CONCURRENT);
		process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
		while (!Files.exists(portFile) && process.isAlive() && System.nanoTime() < deadline) {
			Thread.onSpinWait();
		}
		assertThat(Files.exists(portFile)).as("the application started (log: %s)", log.toAbsolutePath()).isTrue();
		port = Integer.parseInt(Files.readString(portFile, StandardCharsets.UTF_8).trim());
	}

	@AfterAll
	static void stop() throws Exception {
		if (process != null) {
			process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
		if (directory != null) {
			for (File file : directory.toFile().listFiles()) {
				Files.deleteIfExists(file.toPath());
			}
			Files.deleteIfExists(directory);
		}
	}

	@Test
	void keyedStreamedBodiesAreAllAcceptedAndTheirRetriesReplay() throws Exception {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < CONCURRENT; i++) {
			keys.add(UUID.randomUUID().toString());
		}
		Map<Integer, AtomicInteger> statuses = send("/upload", keys);
		assertThat(statuses).as("statuses %s (log: %s)", statuses, log.toAbsolutePath()).containsOnlyKeys(201);
		assertThat(statuses.get(201)).hasValue(CONCURRENT);
		Map<Integer, AtomicInteger> retries = send("/upload", keys);
		assertThat(retries).as("statuses %s (log: %s)", retries, log.toAbsolutePath()).containsOnlyKeys(REPLAYED);
		assertThat(retries.get(REPLAYED)).hasValue(CONCURRENT);
		assertThat(process.isAlive()).isTrue();
		String output = Files.readString(log, StandardCharsets.UTF_8);
		assertThat(output).doesNotContain("OutOfMemoryError").doesNotContain("OutOfDirectMemoryError");
		assertThat(output).as("Netty's leak detection").doesNotContain("LEAK:");
	}

	@Test
	void requestsWithoutKeysAreNeverBuffered() {
		Map<Integer, AtomicInteger> statuses = send("/functional/upload", null);
		assertThat(statuses).as("statuses %s (log: %s)", statuses, log.toAbsolutePath()).containsOnlyKeys(201);
		assertThat(statuses.get(201)).hasValue(CONCURRENT);
		assertThat(process.isAlive()).isTrue();
	}

	/**
	 * Sends {@value #CONCURRENT} uploads at once, with {@code keys} (one each) or without
	 * keys, and counts the answers by status ({@link #REPLAYED} for a replayed 201, -1
	 * for a request without an answer).
	 */
	private static Map<Integer, AtomicInteger> send(String path, @Nullable List<String> keys) {
		byte[] body = new byte[BODY];
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
		List<CompletableFuture<Void>> all = new ArrayList<>();
		for (int i = 0; i < CONCURRENT; i++) {
			HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
				.timeout(Duration.ofSeconds(120))
				.header("Content-Type", "application/octet-stream")
				.POST(HttpRequest.BodyPublishers.ofByteArray(body));
			if (keys != null) {
				request.header("Idempotency-Key", keys.get(i));
			}
			all.add(client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString())
				.handle((response, failure) -> {
					int status = (response != null) ? response.statusCode() : -1;
					if (response != null && response.headers().firstValue("Idempotent-Replayed").isPresent()) {
						status = REPLAYED;
					}
					statuses.computeIfAbsent(status, (key) -> new AtomicInteger()).incrementAndGet();
					return null;
				}));
		}
		CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
		return statuses;
	}

}
