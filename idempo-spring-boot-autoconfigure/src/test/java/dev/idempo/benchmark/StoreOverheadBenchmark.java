package dev.idempo.benchmark;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestRedis;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Prints what a store operation costs over the store's own client, in one run and on one
 * thread, so that the overhead idempo adds to a round trip can be read without the HTTP
 * stack: the p50 of a raw round trip through the same client ({@code PING} on the same
 * connection factory), of a fresh claim plus complete, and of a claim that finds a
 * completed record (a replay). Figures are measured in interleaved rounds, so that a
 * noisy machine shifts them alike. Not a test: run it with
 * {@code ./mvnw -q -pl idempo-spring-boot-autoconfigure test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=dev.idempo.benchmark.StoreOverheadBenchmark}
 * (argument: iterations per figure, default 20000).
 *
 * @author idempo
 */
public final class StoreOverheadBenchmark {

	private static final Duration LOCK_TTL = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final int ROUNDS = 5;

	private StoreOverheadBenchmark() {
	}

	public static void main(String[] args) {
		int iterations = (args.length > 0) ? Integer.parseInt(args[0]) : 20_000;
		byte[] response = new byte[1100];
		ThreadLocalRandom.current().nextBytes(response);
		StoredRecord record = new StoredRecord("f".repeat(64), response);
		Map<String, Task> tasks = new LinkedHashMap<>();
		List<Runnable> cleanups = new ArrayList<>();
		InMemoryLockingStore memory = new InMemoryLockingStore(Clock.systemUTC(), 1_000_000, 512L * 1024 * 1024);
		addStore(tasks, "memory", memory, record);
		TestRedis.Server server = TestRedis.server();
		LettuceConnectionFactory factory = server.createConnectionFactory();
		cleanups.add(() -> {
			server.deleteKeys("idempo-bench:");
			factory.destroy();
		});
		tasks.put("redis: client round trip (PING)", (i) -> {
			try (RedisConnection connection = factory.getConnection()) {
				connection.ping();
			}
		});
		addStore(tasks, "redis", new RedisLockingStore(factory, "idempo-bench:"), record);
		try {
			run(tasks, iterations);
		}
		finally {
			cleanups.forEach(Runnable::run);
		}
	}

	/**
	 * Adds a store's two figures: a fresh claim plus complete, and a replay of a key
	 * completed earlier in the run.
	 */
	static void addStore(Map<String, Task> tasks, String name, LockingStore store, StoredRecord record) {
		String prefix = HexFormat.of().formatHex(randomBytes(8));
		AtomicInteger completed = new AtomicInteger();
		tasks.put(name + ": fresh claim + complete", (i) -> {
			String key = prefix + Integer.toHexString(completed.get());
			ClaimResult result = store.claim(key, LOCK_TTL);
			if (!(result instanceof ClaimResult.Acquired acquired)) {
				throw new IllegalStateException("expected to acquire a fresh key, got " + result);
			}
			if (!store.complete(acquired.lease(), record, TTL)) {
				throw new IllegalStateException("complete lost its lease");
			}
			completed.incrementAndGet();
		});
		tasks.put(name + ": replay (claim finds the record)", (i) -> {
			String key = prefix + Integer.toHexString(i % Math.max(1, completed.get()));
			ClaimResult result = store.claim(key, LOCK_TTL);
			if (!(result instanceof ClaimResult.Completed)) {
				throw new IllegalStateException("expected a completed record, got " + result);
			}
		});
	}

	static void run(Map<String, Task> tasks, int iterations) {
		int perRound = Math.max(1, iterations / ROUNDS);
		// warm-up
		tasks.values().forEach((task) -> time(task, Math.min(perRound, 2000)));
		Map<String, long[]> samples = new LinkedHashMap<>();
		tasks.keySet().forEach((name) -> samples.put(name, new long[0]));
		for (int round = 0; round < ROUNDS; round++) {
			for (Map.Entry<String, Task> task : tasks.entrySet()) {
				long[] times = time(task.getValue(), perRound);
				long[] all = samples.get(task.getKey());
				long[] merged = Arrays.copyOf(all, all.length + times.length);
				System.arraycopy(times, 0, merged, all.length, times.length);
				samples.put(task.getKey(), merged);
			}
		}
		System.out.printf("%-46s %10s %10s%n", "operation (one thread, " + ROUNDS + " interleaved rounds)", "p50 µs",
				"p99 µs");
		samples.forEach((name, times) -> {
			Arrays.sort(times);
			System.out.printf("%-46s %10.1f %10.1f%n", name, times[times.length / 2] / 1000.0,
					times[(int) (times.length * 0.99)] / 1000.0);
		});
	}

	private static long[] time(Task task, int iterations) {
		long[] nanos = new long[iterations];
		for (int i = 0; i < iterations; i++) {
			long start = System.nanoTime();
			task.run(i);
			nanos[i] = System.nanoTime() - start;
		}
		return nanos;
	}

	private static byte[] randomBytes(int count) {
		byte[] bytes = new byte[count];
		ThreadLocalRandom.current().nextBytes(bytes);
		return bytes;
	}

	/** One measured operation. */
	interface Task {

		void run(int i);

	}

}
