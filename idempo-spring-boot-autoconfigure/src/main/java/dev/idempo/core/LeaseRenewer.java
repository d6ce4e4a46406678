package dev.idempo.core;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;

import org.springframework.beans.factory.DisposableBean;

/**
 * Renews the leases of running handlers on stores whose claims expire, about every third
 * of the lock TTL. One timer thread schedules; the store calls run on a small pool, so
 * one slow renewal never delays the others. A lease whose renewal fails or has not
 * succeeded for a whole lock TTL is reported lost, so that its response is not stored.
 *
 * @author idempo
 */
public class LeaseRenewer implements DisposableBean {

	private static final Log logger = LogFactory.getLog(LeaseRenewer.class);

	private static final int WORKERS = 4;

	private final ScheduledThreadPoolExecutor timer;

	private final ThreadPoolExecutor workers;

	/**
	 * Creates a renewer with its own daemon threads.
	 */
	public LeaseRenewer() {
		this.timer = new ScheduledThreadPoolExecutor(1, daemonThreads("idempo-lease-timer"));
		this.timer.setRemoveOnCancelPolicy(true);
		this.workers = new ThreadPoolExecutor(WORKERS, WORKERS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				daemonThreads("idempo-lease-renewal"));
		this.workers.allowCoreThreadTimeOut(true);
	}

	/**
	 * Renews {@code lease} until the returned handle is cancelled or the lease is lost.
	 * @param store the store that granted the lease
	 * @param lease the lease
	 * @param lockTtl the lease length
	 * @param onLost called once, on a renewer thread, if the lease is found lost
	 * @return a handle that stops renewal when cancelled
	 */
	public ScheduledFuture<?> renew(LockingStore store, Lease lease, Duration lockTtl, Runnable onLost) {
		Renewal renewal = new Renewal(store, lease, lockTtl, onLost);
		long period = Math.max(1, lockTtl.toMillis() / 3);
		renewal.future = this.timer.scheduleAtFixedRate(renewal, period, period, TimeUnit.MILLISECONDS);
		return renewal.future;
	}

	/**
	 * Runs {@code task} once after {@code delay}, on the timer thread.
	 * @param task the task
	 * @param delay the delay
	 * @return a handle that cancels it
	 */
	public ScheduledFuture<?> schedule(Runnable task, Duration delay) {
		return this.timer.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
	}

	@Override
	public void destroy() {
		this.timer.shutdownNow();
		this.workers.shutdownNow();
	}

	private static ThreadFactory daemonThreads(String name) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	private final class Renewal implements Runnable {

		private final LockingStore store;

		private final Lease lease;

		private final Duration lockTtl;

		private final Runnable onLost;

		private final AtomicBoolean inFlight = new AtomicBoolean();

		private final AtomicBoolean lost = new AtomicBoolean();

		private volatile long lastRenewed = System.nanoTime();

		private volatile @Nullable ScheduledFuture<?> future;

		Renewal(LockingStore store, Lease lease, Duration lockTtl, Runnable onLost) {
			this.store = store;
			this.lease = lease;
			this.lockTtl = lockTtl;
			this.onLost = onLost;
		}

		@Override
		public void run() {
			if (System.nanoTime() - this.lastRenewed >= this.lockTtl.toNanos()) {
				// the store may already have let the lease go: assume the worst
				lose();
				return;
			}
			if (!this.inFlight.compareAndSet(false, true)) {
				return;
			}
			try {
				LeaseRenewer.this.workers.execute(this::renewOnce);
			}
			catch (RejectedExecutionException ex) {
				this.inFlight.set(false);
			}
		}

		private void renewOnce() {
			try {
				long started = System.nanoTime();
				if (this.store.renew(this.lease, this.lockTtl)) {
					this.lastRenewed = started;
				}
				else {
					lose();
				}
			}
			catch (RuntimeException ex) {
				// keep trying until a whole lock TTL has passed without success
				logger.warn("Could not renew an idempotency lease; retrying", ex);
			}
			finally {
				this.inFlight.set(false);
			}
		}

		private void lose() {
			ScheduledFuture<?> future = this.future;
			if (future != null) {
				future.cancel(false);
			}
			if (this.lost.compareAndSet(false, true)) {
				this.onLost.run();
			}
		}

	}

}
