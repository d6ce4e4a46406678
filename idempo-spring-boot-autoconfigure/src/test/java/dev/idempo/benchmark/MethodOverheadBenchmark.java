package dev.idempo.benchmark;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;

import dev.idempo.Idempotent;
import dev.idempo.testsupport.TestRedis;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Prints what {@code @Idempotent(key = ...)} costs a method call, against the same call
 * unprotected, on the memory and Redis stores, with one thread and with 32: calls per
 * second of the plain method, of the protected method with a fresh key per call (claim,
 * run, store) and with a key that was stored before (replay), and their ratios. The three
 * are measured in interleaved rounds within one run, so that a noisy machine shifts them
 * alike. Not a test: run it with
 * {@code ./mvnw -q -pl idempo-spring-boot-autoconfigure test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=dev.idempo.benchmark.MethodOverheadBenchmark}
 * (argument: seconds per figure and round, default 2).
 *
 * @author idempo
 */
public final class MethodOverheadBenchmark {

	private static final int ROUNDS = 3;

	private MethodOverheadBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		long millis = (long) (((args.length > 0) ? Double.parseDouble(args[0]) : 2) * 1000);
		String prefix = "idempo-method-bench:" + UUID.randomUUID() + ":";
		Map<String, String[]> stores = new LinkedHashMap<>();
		stores.put("memory", new String[] { "idempo.store.type=memory" });
		stores.put("redis", new String[] { "idempo.store.type=redis",
				"spring.data.redis.url=" + TestRedis.server().url(), "idempo.store.redis.key-prefix=" + prefix });
		System.out.printf("%-8s %-8s %14s %14s %14s %9s %9s%n", "store", "threads", "plain/s", "fresh key/s",
				"replay/s", "fresh", "replay");
		try {
			for (Map.Entry<String, String[]> store : stores.entrySet()) {
				try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BenchmarkApplication.class)
					.web(WebApplicationType.NONE)
					.properties("spring.main.banner-mode=off", "logging.level.root=warn",
							"idempo.store.memory.max-entries=10000000", "idempo.store.memory.max-size=2GB")
					.properties(store.getValue())
					.run()) {
					Payments payments = context.getBean(Payments.class);
					for (int threads : new int[] { 1, 32 }) {
						measure(store.getKey(), threads, payments, millis);
					}
				}
			}
		}
		finally {
			TestRedis.server().deleteKeys(prefix);
		}
	}

	private static void measure(String store, int threads, Payments payments, long millis) throws Exception {
		String run = UUID.randomUUID().toString();
		int stored = 1000;
		for (int i = 0; i < stored; i++) {
			payments.pay(run + ":stored:" + i, BigDecimal.ONE);
		}
		AtomicInteger fresh = new AtomicInteger();
		Map<String, IntConsumer> calls = new LinkedHashMap<>();
		calls.put("plain", (i) -> payments.payUnprotected(run + ":plain:" + i, BigDecimal.ONE));
		calls.put("fresh", (i) -> payments.pay(run + ":fresh:" + fresh.incrementAndGet(), BigDecimal.ONE));
		calls.put("replay", (i) -> payments.pay(run + ":stored:" + (i % stored), BigDecimal.ONE));
		Map<String, Double> rates = new LinkedHashMap<>();
		calls.keySet().forEach((name) -> rates.put(name, 0.0));
		// warm-up, then interleaved rounds
		for (IntConsumer call : calls.values()) {
			rate(call, threads, Math.min(millis, 1000));
		}
		for (int round = 0; round < ROUNDS; round++) {
			for (Map.Entry<String, IntConsumer> call : calls.entrySet()) {
				rates.merge(call.getKey(), rate(call.getValue(), threads, millis) / ROUNDS, Double::sum);
			}
		}
		double plain = rates.get("plain");
		System.out.printf("%-8s %-8d %14.0f %14.0f %14.0f %8.2fx %8.2fx%n", store, threads, plain, rates.get("fresh"),
				rates.get("replay"), plain / rates.get("fresh"), plain / rates.get("replay"));
	}

	/** Calls per second of {@code call} on {@code threads} threads for {@code millis}. */
	private static double rate(IntConsumer call, int threads, long millis) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		CountDownLatch start = new CountDownLatch(1);
		AtomicLong calls = new AtomicLong();
		// a final local, not a shared field: a loop may never read a field again
		long begin = System.nanoTime();
		long deadline = begin + TimeUnit.MILLISECONDS.toNanos(millis);
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			workers.add(executor.submit(() -> {
				start.await();
				int i = 0;
				while (System.nanoTime() < deadline) {
					call.accept(i++);
					calls.incrementAndGet();
				}
				return null;
			}));
		}
		start.countDown();
		for (Future<?> worker : workers) {
			worker.get();
		}
		long elapsed = System.nanoTime() - begin;
		executor.shutdown();
		return calls.get() * 1e9 / elapsed;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class BenchmarkApplication {

		@Bean
		Payments payments() {
			return new Payments();
		}

	}

	public static class Payments {

		@Idempotent(key = "#id")
		public Receipt pay(String id, BigDecimal amount) {
			return new Receipt(id, amount, "rcpt_" + id.hashCode());
		}

		public Receipt payUnprotected(String id, BigDecimal amount) {
			return new Receipt(id, amount, "rcpt_" + id.hashCode());
		}

	}

	public record Receipt(String id, BigDecimal amount, String reference) {
	}

}
