package dev.idempo.webflux;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.scheduler.Scheduler;

/**
 * The idle timer of the streamed request bodies of one filter
 * ({@code idempo.request-body-timeout}): one periodic check, on a scheduler (never an
 * event loop) and started with the first body, looks at every body being read, instead of
 * a timer task per body. Scheduling a task per request woke the timer's thread on every
 * request (its queue was empty between requests at one client), which a fresh key paid
 * for in latency; watching a body is adding it to a set.
 * <p>
 * The check runs every quarter of the timeout (at least every 10 ms, at most every
 * second), so a body is ended between one timeout and one timeout and a period after its
 * last progress.
 *
 * @author idempo
 */
final class IdleBodies {

	private static final Log logger = LogFactory.getLog(IdleBodies.class);

	private static final long MIN_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private static final long MAX_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final Duration timeout;

	private final long timeoutNanos;

	private final long periodNanos;

	private final Scheduler scheduler;

	private final Set<Runnable> watched = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean started = new AtomicBoolean();

	/**
	 * Creates the timer of bodies that may go {@code timeout} without a byte.
	 * @param timeout the idle timeout, positive
	 * @param scheduler where the check runs
	 */
	IdleBodies(Duration timeout, Scheduler scheduler) {
		this.timeout = timeout;
		this.timeoutNanos = saturatedNanos(timeout);
		this.periodNanos = Math.min(MAX_PERIOD_NANOS, Math.max(MIN_PERIOD_NANOS, this.timeoutNanos / 4));
		this.scheduler = scheduler;
	}

	private static long saturatedNanos(Duration duration) {
		try {
			return Math.max(1, duration.toNanos());
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE / 2;
		}
	}

	Duration timeout() {
		return this.timeout;
	}

	long timeoutNanos() {
		return this.timeoutNanos;
	}

	/**
	 * Checks {@code check} every period until {@link #unwatch unwatched}.
	 * @param check a body's idle check, which unwatches the body once it ended
	 */
	void watch(Runnable check) {
		this.watched.add(check);
		if (!this.started.get() && this.started.compareAndSet(false, true)) {
			try {
				this.scheduler.schedulePeriodically(this::checkAll, this.periodNanos, this.periodNanos,
						TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException ex) {
				// the scheduler is shutting down, and the application with it
				this.started.set(false);
			}
		}
	}

	void unwatch(Runnable check) {
		this.watched.remove(check);
	}

	/**
	 * The number of bodies watched.
	 * @return the count
	 */
	int watched() {
		return this.watched.size();
	}

	private void checkAll() {
		for (Runnable check : this.watched) {
			try {
				check.run();
			}
			catch (RuntimeException ex) {
				logger.warn("The idle check of a streamed request body failed", ex);
			}
		}
	}

}
