package dev.idempo.testsupport;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * What the RabbitMQ and JMS error-handling proofs count, per idempotency key: deliveries
 * to the listener, deliveries that ended without an exception (runs and replays) and runs
 * of the idempotent method's body. A test can hold the first run of a key until it
 * releases it.
 *
 * @author idempo
 */
public final class DeliveryLedger {

	/** How long a proof waits for what it expects. */
	public static final Duration TIMEOUT = Duration.ofSeconds(20);

	private final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> successes = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();

	/**
	 * Holds the first run of a key until the returned latch counts down.
	 * @param key the key
	 * @return the latch that releases it
	 */
	public CountDownLatch hold(String key) {
		CountDownLatch release = new CountDownLatch(1);
		this.holds.put(key, release);
		return release;
	}

	/**
	 * Called by the listener when a message arrives.
	 * @param key the message's key
	 */
	public void delivered(String key) {
		count(this.deliveries, key).incrementAndGet();
	}

	/**
	 * Called by the listener when the idempotent call returned.
	 * @param key the message's key
	 */
	public void succeeded(String key) {
		count(this.successes, key).incrementAndGet();
	}

	/**
	 * The idempotent method's body: counts the run, and holds the first one if the test
	 * asked for it.
	 * @param key the message's key
	 */
	public void run(String key) {
		int run = count(this.runs, key).incrementAndGet();
		CountDownLatch release = this.holds.get(key);
		if (release != null && run == 1) {
			try {
				assertThat(release.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	public int deliveries(String key) {
		return count(this.deliveries, key).get();
	}

	public int successes(String key) {
		return count(this.successes, key).get();
	}

	public int runs(String key) {
		return count(this.runs, key).get();
	}

	private static AtomicInteger count(Map<String, AtomicInteger> counts, String key) {
		return counts.computeIfAbsent(key, (k) -> new AtomicInteger());
	}

	/**
	 * Polls a condition until it holds, failing the test after {@link #TIMEOUT}.
	 * @param condition the condition
	 */
	public static void await(BooleanSupplier condition) {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("Not within " + TIMEOUT);
			}
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

}
