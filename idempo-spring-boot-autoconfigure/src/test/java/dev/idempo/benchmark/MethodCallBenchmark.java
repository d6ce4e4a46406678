package dev.idempo.benchmark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempo.Idempotent;
import dev.idempo.testsupport.TestRedis;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * Prints what {@code @Idempotent(key = ...)} costs a method call: the same bean method
 * called through its Spring proxy without the annotation, with it on a new key (claim,
 * run, store the JSON result), and with it on a key that has a result (claim finds the
 * record, the result is read back, the method does not run), with the memory and the
 * Redis store, on 1 and on 32 threads. Every figure of a store is measured in the same
 * run, in interleaved rounds of fixed duration after a warm-up, so that a noisy machine
 * shifts them alike; the ratios compare figures of one run. The mean is threads × elapsed
 * time / calls, so on more threads than cores it includes the wait for a core; "+ µs" is
 * what the annotation adds to the mean of the unprotected call, "× plain" their ratio.
 * Each measurement checks the executions it expects: every call on a new key runs the
 * method, no replay does.
 * <p>
 * Not a test: run it with
 * {@code ./mvnw -q -pl idempo-spring-boot-autoconfigure test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=dev.idempo.benchmark.MethodCallBenchmark}
 * (arguments: seconds per measurement, default 2; rounds, default 3; stores, default
 * {@code memory,redis}). Redis is found as by the tests ({@link TestRedis}).
 *
 * @author idempo
 */
public final class MethodCallBenchmark {

	private static final int[] THREADS = { 1, 32 };

	private static final int REPLAY_KEYS = 1000;

	/** Latencies kept per thread and measurement; the mean counts every call. */
	private static final int SAMPLES_PER_THREAD = 100_000;

	private MethodCallBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		double seconds = (args.length > 0) ? Double.parseDouble(args[0]) : 2;
		int rounds = (args.length > 1) ? Integer.parseInt(args[1]) : 3;
		List<String> stores = List.of(((args.length > 2) ? args[2] : "memory,redis").split(","));
		long nanos = (long) (seconds * 1e9);
		System.out.printf(Locale.ROOT, "%d CPUs, Java %s, %.1f s per measurement, %d interleaved rounds%n",
				Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), seconds, rounds);
		for (String store : stores) {
			benchmark(store, nanos, rounds);
		}
	}

	private static void benchmark(String store, long nanos, int rounds) throws Exception {
		String prefix = "idempo-bench-method-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt())
				+ ":";
		List<String> properties = new ArrayList<>(List.of("idempo.store.type=" + store,
				"idempo.store.memory.max-entries=20000000", "idempo.store.memory.max-size=4GB",
				"idempo.store.redis.key-prefix=" + prefix, "spring.main.banner-mode=off", "logging.level.root=warn"));
		TestRedis.Server redis = null;
		if ("redis".equals(store)) {
			redis = TestRedis.server();
			properties.add("spring.data.redis.url=" + redis.url());
		}
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BenchmarkApplication.class)
			.web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run()) {
			Receipts receipts = context.getBean(Receipts.class);
			String run = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
			for (int i = 0; i < REPLAY_KEYS; i++) {
				receipts.issue("replay-" + run + "-" + i, i);
			}
			Map<String, Call> calls = new LinkedHashMap<>();
			// every call builds its key alike, so that only the annotation differs
			AtomicLong plain = new AtomicLong();
			calls.put("without @Idempotent", new Call(
					(n) -> receipts.issueUnprotected("plain-" + run + "-" + plain.incrementAndGet(), n), Expect.RUNS));
			AtomicLong fresh = new AtomicLong();
			calls.put("@Idempotent, new key",
					new Call((n) -> receipts.issue("new-" + run + "-" + fresh.incrementAndGet(), n), Expect.RUNS));
			// the arguments of the stored call: other arguments would be a reused key
			calls.put("@Idempotent, replay", new Call(
					(n) -> receipts.issue("replay-" + run + "-" + (n % REPLAY_KEYS), n % REPLAY_KEYS), Expect.REPLAYS));
			// warm-up, long enough for the JIT to compile the protected path before the
			// first figure: a measurement's time per call on one thread, half on 32
			for (Call call : calls.values()) {
				measure(call, receipts, 1, nanos);
				measure(call, receipts, 32, nanos / 2);
			}
			for (int threads : THREADS) {
				Map<String, List<Measurement>> results = new LinkedHashMap<>();
				for (Map.Entry<String, Call> call : calls.entrySet()) {
					measure(call.getValue(), receipts, threads, nanos / 4);
					results.put(call.getKey(), new ArrayList<>());
				}
				for (int round = 0; round < rounds; round++) {
					for (Map.Entry<String, Call> call : calls.entrySet()) {
						results.get(call.getKey()).add(measure(call.getValue(), receipts, threads, nanos));
					}
				}
				print(store, threads, results);
			}
		}
		finally {
			if (redis != null) {
				redis.deleteKeys(prefix);
			}
		}
	}

	private static Measurement measure(Call call, Receipts receipts, int threads, long nanos) throws Exception {
		long executionsBefore = receipts.executions();
		long[][] samples = new long[threads][];
		long[] counts = new long[threads];
		CountDownLatch ready = new CountDownLatch(threads);
		CountDownLatch go = new CountDownLatch(1);
		List<Thread> workers = new ArrayList<>();
		AtomicLong stopAt = new AtomicLong();
		for (int t = 0; t < threads; t++) {
			int index = t;
			Thread worker = new Thread(() -> {
				long[] kept = new long[SAMPLES_PER_THREAD];
				long count = 0;
				ready.countDown();
				await(go);
				long deadline = stopAt.get();
				long now = System.nanoTime();
				while (now < deadline) {
					call.invoker().invoke(ThreadLocalRandom.current().nextInt(1_000_000));
					long end = System.nanoTime();
					if (count < kept.length) {
						kept[(int) count] = end - now;
					}
					count++;
					now = end;
				}
				samples[index] = Arrays.copyOf(kept, (int) Math.min(count, kept.length));
				counts[index] = count;
			}, "bench-" + t);
			workers.add(worker);
			worker.start();
		}
		ready.await();
		long started = System.nanoTime();
		stopAt.set(started + nanos);
		go.countDown();
		for (Thread worker : workers) {
			worker.join();
		}
		long elapsed = System.nanoTime() - started;
		long total = Arrays.stream(counts).sum();
		long executions = receipts.executions() - executionsBefore;
		long expected = (call.expect() == Expect.RUNS) ? total : 0;
		if (executions != expected) {
			throw new IllegalStateException(
					"expected " + expected + " executions of " + total + " calls, counted " + executions);
		}
		long[] all = Arrays.stream(samples).flatMapToLong(Arrays::stream).sorted().toArray();
		return new Measurement(total * 1e9 / elapsed, (double) elapsed * threads / total / 1000.0,
				all[all.length / 2] / 1000.0, all[(int) (all.length * 0.99)] / 1000.0);
	}

	private static void print(String store, int threads, Map<String, List<Measurement>> results) {
		System.out.printf(Locale.ROOT, "%n%s store, %d thread%s (median of the rounds)%n", store, threads,
				(threads > 1) ? "s" : "");
		System.out.printf(Locale.ROOT, "%-24s %12s %10s %10s %10s %10s %8s%n", "call", "calls/s", "mean µs", "+ µs",
				"p50 µs", "p99 µs", "× plain");
		double baseline = median(results.values().iterator().next(), Measurement::meanMicros);
		results.forEach((name, measurements) -> {
			double mean = median(measurements, Measurement::meanMicros);
			System.out.printf(Locale.ROOT, "%-24s %12.0f %10.2f %10.2f %10.2f %10.2f %8.1f%n", name,
					median(measurements, Measurement::callsPerSecond), mean, mean - baseline,
					median(measurements, Measurement::p50), median(measurements, Measurement::p99), mean / baseline);
		});
	}

	private static double median(List<Measurement> measurements, java.util.function.ToDoubleFunction<Measurement> f) {
		double[] values = measurements.stream().mapToDouble(f).sorted().toArray();
		return values[values.length / 2];
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Whether a call is expected to run the method. */
	enum Expect {

		RUNS, REPLAYS

	}

	/** How one kind of call is made. */
	record Call(Invoker invoker, Expect expect) {
	}

	/** Makes one call. */
	interface Invoker {

		Receipt invoke(long n);

	}

	/**
	 * One measurement.
	 *
	 * @param callsPerSecond calls completed per second, all threads together
	 * @param meanMicros threads × elapsed time / calls
	 * @param p50 median latency of the sampled calls
	 * @param p99 99th percentile latency of the sampled calls
	 */
	record Measurement(double callsPerSecond, double meanMicros, double p50, double p99) {
	}

	/** The result the benchmarked method returns, stored as JSON. */
	public record Receipt(String paymentId, long amount, String status) {
	}

	/** The benchmarked bean: one method with the annotation, the same without. */
	public static class Receipts {

		private final AtomicLong executions = new AtomicLong();

		@Idempotent(key = "#paymentId")
		public Receipt issue(String paymentId, long amount) {
			return receipt(paymentId, amount);
		}

		public Receipt issueUnprotected(String paymentId, long amount) {
			return receipt(paymentId, amount);
		}

		private Receipt receipt(String paymentId, long amount) {
			this.executions.incrementAndGet();
			return new Receipt(paymentId, amount, "issued");
		}

		long executions() {
			return this.executions.get();
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Receipts.class)
	static class BenchmarkApplication {

	}

}
