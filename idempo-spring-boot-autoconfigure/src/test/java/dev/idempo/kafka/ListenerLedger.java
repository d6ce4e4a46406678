package dev.idempo.kafka;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.RecordInterceptor;

/**
 * What the error-handling proofs count, per record key: deliveries to the listener
 * (retries included, through the container's record interceptor), deliveries that ended
 * without an exception (runs and replays), runs of the listener's body, body runs that
 * completed, and the records the error handler's recoverer received. A test can hold the
 * first run of a key until it releases it, and have it fail then.
 *
 * @author idempo
 */
public class ListenerLedger implements RecordInterceptor<Object, Object>, ConsumerRecordRecoverer {

	private final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> successes = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> completed = new ConcurrentHashMap<>();

	private final Map<String, Exception> recovered = new ConcurrentHashMap<>();

	private final Map<String, Hold> holds = new ConcurrentHashMap<>();

	/**
	 * Holds the first run of a key until {@link Hold#release()}.
	 * @param key the key
	 * @param fail whether that run then throws
	 * @return the hold
	 */
	public Hold hold(String key, boolean fail) {
		Hold hold = new Hold(fail);
		this.holds.put(key, hold);
		return hold;
	}

	/**
	 * The listener's body, called by the idempotent listener method.
	 * @param key the record's key
	 */
	void run(String key) {
		int run = count(this.runs, key).incrementAndGet();
		Hold hold = this.holds.get(key);
		if (hold != null && run == 1) {
			hold.entered.countDown();
			hold.awaitRelease();
			if (hold.fail) {
				throw new IllegalStateException("The first delivery of " + key + " fails");
			}
		}
		count(this.completed, key).incrementAndGet();
	}

	@Override
	public @Nullable ConsumerRecord<Object, Object> intercept(ConsumerRecord<Object, Object> record,
			Consumer<Object, Object> consumer) {
		count(this.deliveries, String.valueOf(record.key())).incrementAndGet();
		return record;
	}

	@Override
	public void success(ConsumerRecord<Object, Object> record, Consumer<Object, Object> consumer) {
		count(this.successes, String.valueOf(record.key())).incrementAndGet();
	}

	@Override
	public void accept(ConsumerRecord<?, ?> record, @Nullable Exception exception) {
		this.recovered.put(String.valueOf(record.key()),
				(exception != null) ? exception : new IllegalStateException("no exception"));
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

	public int completed(String key) {
		return count(this.completed, key).get();
	}

	public @Nullable Exception recovered(String key) {
		return this.recovered.get(key);
	}

	private static AtomicInteger count(Map<String, AtomicInteger> counts, String key) {
		return counts.computeIfAbsent(key, (k) -> new AtomicInteger());
	}

	/** The first run of a key, held until the test releases it. */
	public static final class Hold {

		private static final Duration LONGEST = Duration.ofSeconds(30);

		private final CountDownLatch entered = new CountDownLatch(1);

		private final CountDownLatch release = new CountDownLatch(1);

		private final boolean fail;

		Hold(boolean fail) {
			this.fail = fail;
		}

		public boolean awaitEntered() throws InterruptedException {
			return this.entered.await(LONGEST.toMillis(), TimeUnit.MILLISECONDS);
		}

		public void release() {
			this.release.countDown();
		}

		private void awaitRelease() {
			try {
				if (!this.release.await(LONGEST.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new IllegalStateException("Never released");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

	}

}
