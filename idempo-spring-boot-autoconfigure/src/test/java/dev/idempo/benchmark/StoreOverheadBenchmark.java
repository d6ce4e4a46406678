package dev.idempo.benchmark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestRedis;

import redis.clients.jedis.JedisPoolConfig;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Prints what a store operation costs over the store's own client, in one run and on one
 * thread, so that the overhead idempo adds to a round trip can be read without the HTTP
 * stack: the p50 of a raw round trip through the same client ({@code PING} on the same
 * connection factory), of the claim script sent raw, of a fresh claim plus complete (and
 * of each apart), and of a claim that finds a completed record (a replay), with Lettuce
 * and with Jedis. Figures are measured in interleaved rounds, so that a noisy machine
 * shifts them alike. A script costs more than a {@code PING} on the server too: read
 * {@code INFO commandstats} before and after a run for the time Redis spent in
 * {@code EVALSHA} per call. Not a test: run it with
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
		LettuceConnectionFactory lettuce = server.createConnectionFactory();
		JedisConnectionFactory jedis = jedis(URI.create(server.url()));
		cleanups.add(() -> {
			server.deleteKeys("idempo-bench:");
			lettuce.destroy();
			jedis.destroy();
		});
		addRedis(tasks, "lettuce", lettuce, record);
		addRedis(tasks, "jedis", jedis, record);
		try {
			run(tasks, iterations);
		}
		finally {
			cleanups.forEach(Runnable::run);
		}
	}

	/**
	 * Adds the Redis figures of one client: a raw round trip ({@code PING}), the claim
	 * script sent raw ({@code EVALSHA} on a key that has a record, what a replay's claim
	 * costs without the store's code around it), then the store's two figures.
	 */
	private static void addRedis(Map<String, Task> tasks, String client, RedisConnectionFactory factory,
			StoredRecord record) {
		tasks.put("redis " + client + ": PING", (i) -> {
			try (RedisConnection connection = factory.getConnection()) {
				connection.ping();
			}
		});
		RedisLockingStore store = new RedisLockingStore(factory, "idempo-bench:");
		String replayed = HexFormat.of().formatHex(randomBytes(8));
		if (!(store.claim(replayed, LOCK_TTL) instanceof ClaimResult.Acquired acquired)
				|| !store.complete(acquired.lease(), record, TTL)) {
			throw new IllegalStateException("could not store the record of the raw script");
		}
		byte[] claim = readScript("claim.lua");
		String sha1 = sha1(claim);
		byte[][] keysAndArgs = { bytes(store.lockKey(replayed)), bytes(store.recordKey(replayed)), bytes("token"),
				bytes("30000") };
		tasks.put("redis " + client + ": raw EVALSHA claim (record)", (i) -> {
			try (RedisConnection connection = factory.getConnection()) {
				connection.scriptingCommands().evalSha(sha1, ReturnType.MULTI, 2, keysAndArgs);
			}
		});
		addStore(tasks, "redis " + client, store, record);
	}

	private static JedisConnectionFactory jedis(URI url) {
		JedisPoolConfig pool = new JedisPoolConfig();
		pool.setMaxTotal(8);
		JedisConnectionFactory factory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration(url.getHost(), url.getPort()),
				JedisClientConfiguration.builder().usePooling().poolConfig(pool).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static byte[] readScript(String name) {
		try (InputStream in = StoreOverheadBenchmark.class.getResourceAsStream("/dev/idempo/store/redis/" + name)) {
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String sha1(byte[] source) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Adds a store's two figures: a fresh claim plus complete, and a replay of a key
	 * completed earlier in the run.
	 */
	static void addStore(Map<String, Task> tasks, String name, LockingStore store, StoredRecord record) {
		String prefix = HexFormat.of().formatHex(randomBytes(8));
		AtomicInteger completed = new AtomicInteger();
		AtomicInteger claimed = new AtomicInteger();
		String claimedPrefix = HexFormat.of().formatHex(randomBytes(8));
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
		// the same two operations timed apart: each round claims as many keys as it then
		// completes
		Deque<Lease> leases = new ArrayDeque<>();
		tasks.put(name + ": claim of a fresh key", (i) -> {
			String key = claimedPrefix + Integer.toHexString(claimed.getAndIncrement());
			if (!(store.claim(key, LOCK_TTL) instanceof ClaimResult.Acquired acquired)) {
				throw new IllegalStateException("expected to acquire a fresh key");
			}
			leases.add(acquired.lease());
		});
		tasks.put(name + ": complete of that claim", (i) -> {
			if (!store.complete(leases.remove(), record, TTL)) {
				throw new IllegalStateException("complete lost its lease");
			}
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
		System.out.printf("%-52s %10s %10s%n", "operation (one thread, " + ROUNDS + " interleaved rounds)", "p50 µs",
				"p99 µs");
		samples.forEach((name, times) -> {
			Arrays.sort(times);
			System.out.printf("%-52s %10.1f %10.1f%n", name, times[times.length / 2] / 1000.0,
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
