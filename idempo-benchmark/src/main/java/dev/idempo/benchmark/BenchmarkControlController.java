package dev.idempo.benchmark;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import dev.idempo.store.LockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.webflux.IdempotencyWebFilter;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.http.MediaType;
import org.springframework.util.Assert;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * What {@code benchmark/run.sh} drives the application with; every answer is
 * {@code name=value} lines.
 *
 * @author idempo
 */
@RestController
class BenchmarkControlController {

	private static final Pattern KEY_PREFIX = Pattern.compile("[A-Za-z0-9_.:-]{1,200}");

	private static final int PRIME_CONCURRENCY = 16;

	private final BenchmarkCounters counters;

	private final SlowGate slowGate;

	private final Environment environment;

	private final ApplicationContext context;

	private final ObjectProvider<LockingStore> store;

	private final ObjectProvider<ReactiveLockingStore> reactiveStore;

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	BenchmarkControlController(BenchmarkCounters counters, SlowGate slowGate, Environment environment,
			ApplicationContext context, ObjectProvider<LockingStore> store,
			ObjectProvider<ReactiveLockingStore> reactiveStore) {
		this.counters = counters;
		this.slowGate = slowGate;
		this.environment = environment;
		this.context = context;
		this.store = store;
		this.reactiveStore = reactiveStore;
	}

	/**
	 * What runs: the web server, idempo's request flow ({@code webflux} if the
	 * application has idempo's {@code IdempotencyWebFilter}, else {@code servlet}) and
	 * the store that flow uses (on WebFlux the reactive one), so that the script can
	 * check the stack it asked for and the report can name them.
	 * @return {@code name=value} lines: {@code server}, {@code flow}, {@code store}
	 */
	@GetMapping(path = "/bench/info", produces = MediaType.TEXT_PLAIN_VALUE)
	String info() {
		String server = (this.context instanceof WebServerApplicationContext web)
				? web.getWebServer().getClass().getSimpleName() : "unknown";
		boolean webFlux = this.context.getBeanNamesForType(IdempotencyWebFilter.class, false, false).length > 0;
		Object store = webFlux ? this.reactiveStore.getIfUnique() : this.store.getIfUnique();
		return "server=" + server + "\nflow=" + (webFlux ? "webflux" : "servlet") + "\nstore="
				+ ((store != null) ? store.getClass().getSimpleName() : "unknown") + "\n";
	}

	/**
	 * The counters, the held requests, and the JIT's total compilation time in
	 * milliseconds ({@code -1} if unknown), which tells the script when warm-up is over.
	 * @return {@code name=value} lines
	 */
	@GetMapping(path = "/bench/counters", produces = MediaType.TEXT_PLAIN_VALUE)
	String counters() {
		CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
		long jitMillis = (jit != null && jit.isCompilationTimeMonitoringSupported()) ? jit.getTotalCompilationTime()
				: -1;
		return this.counters.report() + "slow.entered=" + this.slowGate.entered() + "\nslow.left="
				+ this.slowGate.left() + "\njit.ms=" + jitMillis + "\n";
	}

	@PostMapping(path = "/bench/reset", produces = MediaType.TEXT_PLAIN_VALUE)
	String reset() {
		this.counters.reset();
		return counters();
	}

	@PostMapping(path = "/bench/slow/release", produces = MediaType.TEXT_PLAIN_VALUE)
	String release() {
		this.slowGate.release();
		return counters();
	}

	/**
	 * Sends {@code count} requests with the keys {@code <prefix>-0} to
	 * {@code <prefix>-<count - 1>} and the given body to {@code path} of this
	 * application, over HTTP, {@value #PRIME_CONCURRENCY} at a time, so that a replay run
	 * finds them stored.
	 * @param prefix the key prefix
	 * @param count how many keys
	 * @param path the endpoint
	 * @param body the request body, byte for byte what the replay run sends
	 * @return the number of requests per status, and how many were replayed
	 */
	@PostMapping(path = "/bench/prime", produces = MediaType.TEXT_PLAIN_VALUE)
	String prime(@RequestParam String prefix, @RequestParam int count,
			@RequestParam(defaultValue = "/idem") String path, @RequestBody byte[] body) throws Exception {
		Assert.isTrue(KEY_PREFIX.matcher(prefix).matches(), "prefix must be 1 to 200 of A-Za-z0-9_.:-");
		Assert.isTrue(count > 0 && count <= 1_000_000, "count must be 1 to 1000000");
		Assert.isTrue(path.equals("/idem") || path.equals("/pay-idem"), "path must be /idem or /pay-idem");
		URI uri = URI.create("http://127.0.0.1:" + this.environment.getRequiredProperty("local.server.port") + path);
		AtomicInteger next = new AtomicInteger();
		ExecutorService workers = Executors.newFixedThreadPool(PRIME_CONCURRENCY);
		try {
			List<Future<Map<String, Integer>>> results = new ArrayList<>();
			for (int i = 0; i < PRIME_CONCURRENCY; i++) {
				results.add(workers.submit(() -> send(uri, prefix, count, next, body)));
			}
			Map<String, Integer> total = new TreeMap<>();
			for (Future<Map<String, Integer>> result : results) {
				result.get().forEach((name, value) -> total.merge(name, value, Integer::sum));
			}
			StringBuilder report = new StringBuilder("primed=" + count + "\n");
			total.forEach((name, value) -> report.append(name).append('=').append(value).append('\n'));
			return report.toString();
		}
		finally {
			workers.shutdownNow();
		}
	}

	private Map<String, Integer> send(URI uri, String prefix, int count, AtomicInteger next, byte[] body)
			throws IOException, InterruptedException {
		Map<String, Integer> outcomes = new TreeMap<>();
		for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
			HttpRequest request = HttpRequest.newBuilder(uri)
				.timeout(Duration.ofSeconds(30))
				.header("Content-Type", "application/json")
				.header("Idempotency-Key", prefix + "-" + i)
				.POST(HttpRequest.BodyPublishers.ofByteArray(body))
				.build();
			HttpResponse<Void> response = this.client.send(request, HttpResponse.BodyHandlers.discarding());
			outcomes.merge("status." + response.statusCode(), 1, Integer::sum);
			if (response.headers().firstValue("Idempotent-Replayed").isPresent()) {
				outcomes.merge("replayed", 1, Integer::sum);
			}
		}
		return outcomes;
	}

}
