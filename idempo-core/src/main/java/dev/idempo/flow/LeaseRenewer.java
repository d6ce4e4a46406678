package dev.idempo.flow;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
import reactor.core.publisher.Mono;

import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.ReactiveLockingStore;

import org.springframework.beans.factory.DisposableBean;

/**
 * Renews the leases of running handlers on stores whose claims expire, about every third
 * of the lock TTL. A lease whose renewal fails or has not succeeded for a whole lock TTL
 * is reported lost, so that its response is not stored.
 * <p>
 * Starting and stopping a renewal only add to and remove from a concurrent set: nearly
 * every request ends long before its first renewal is due, and scheduling (then
 * cancelling) a timer task for each one woke the timer thread and contended on its queue
 * lock on every request, which showed as tens of microseconds of latency. Instead one
 * timer task sweeps the set every sixth of the lock TTL, and the store calls of due
 * renewals run on a small pool, so one slow renewal never delays the others.
 *
 * @author idempo
 */
public class LeaseRenewer implements DisposableBean {

	private static final Log logger = LogFactory.getLog(LeaseRenewer.class);

	private static final int WORKERS = 4;

	private static final long MIN_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final ScheduledThreadPoolExecutor timer;

	private final ThreadPoolExecutor workers;

	private final Set<Renewal> active = ConcurrentHashMap.newKeySet();

	private final Object sweepLock = new Object();

	/** The interval of the running sweep; only ever shortened. */
	private volatile long sweepIntervalNanos = Long.MAX_VALUE;

	// guarded by sweepLock
	private @Nullable ScheduledFuture<?> sweep;

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
	 * Renews {@code lease} until the returned renewal is {@linkplain Renewal#stop()
	 * stopped} or the lease is lost. Called on the request thread right after the claim;
	 * it never blocks and never wakes another thread (except the first time, and whenever
	 * a shorter lock TTL than any before needs the sweep to run more often).
	 * @param store the store that granted the lease
	 * @param lease the lease
	 * @param lockTtl the lease length
	 * @return the renewal, to stop once the response is stored or the key released
	 */
	public Renewal renew(LockingStore store, Lease lease, Duration lockTtl) {
		return start(new Renewal(new BlockingRenewCall(store, lease, lockTtl), lockTtl));
	}

	/**
	 * Renews {@code lease} on a non-blocking store, with the same semantics as
	 * {@link #renew(LockingStore, Lease, Duration)}: the store's {@code Mono} is
	 * subscribed on the renewal workers (so that a store that blocks its subscriber
	 * delays no other lease), a renewal still under way when the next one is due is not
	 * sent again, and a lease whose renewal was refused, or that no renewal answered for
	 * a whole lock TTL, is lost. Safe to call on an event loop: it only adds to a
	 * concurrent set.
	 * @param store the store that granted the lease
	 * @param lease the lease
	 * @param lockTtl the lease length
	 * @return the renewal, to stop once the response is stored or the key released
	 */
	public Renewal renew(ReactiveLockingStore store, Lease lease, Duration lockTtl) {
		return start(new Renewal(new ReactiveRenewCall(store, lease, lockTtl), lockTtl));
	}

	private Renewal start(Renewal renewal) {
		this.active.add(renewal);
		long interval = Math.max(MIN_PERIOD_NANOS, renewal.periodNanos / 2);
		if (interval < this.sweepIntervalNanos) {
			sweepEvery(interval);
		}
		return renewal;
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

	private void sweepEvery(long intervalNanos) {
		synchronized (this.sweepLock) {
			if (intervalNanos >= this.sweepIntervalNanos) {
				return;
			}
			ScheduledFuture<?> previous = this.sweep;
			this.sweep = this.timer.scheduleAtFixedRate(this::sweep, intervalNanos, intervalNanos,
					TimeUnit.NANOSECONDS);
			this.sweepIntervalNanos = intervalNanos;
			if (previous != null) {
				previous.cancel(false);
			}
		}
	}

	private void sweep() {
		long now = System.nanoTime();
		for (Renewal renewal : this.active) {
			try {
				renewal.check(now);
			}
			catch (RuntimeException ex) {
				// a periodic task that throws never runs again: sweep the others
				logger.warn("Could not check an idempotency lease renewal", ex);
			}
		}
	}

	private static ThreadFactory daemonThreads(String name) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * The renewal of one lease. Its identity is its hash key in the set of active
	 * renewals.
	 */
	public final class Renewal {

		private final RenewCall call;

		private final long lockTtlNanos;

		private final long periodNanos;

		private final AtomicBoolean inFlight = new AtomicBoolean();

		private final AtomicBoolean lost = new AtomicBoolean();

		private volatile long lastRenewed = System.nanoTime();

		Renewal(RenewCall call, Duration lockTtl) {
			this.call = call;
			this.lockTtlNanos = lockTtl.toNanos();
			this.periodNanos = Math.max(MIN_PERIOD_NANOS, this.lockTtlNanos / 3);
		}

		/**
		 * Whether the lease was found lost: a renewal was refused, or none succeeded for
		 * a whole lock TTL. Read by the thread that ends the request, before it stores.
		 * @return whether the lease is lost
		 */
		public boolean isLost() {
			return this.lost.get();
		}

		/**
		 * Stops renewing. Idempotent; a store call already running finishes, and its
		 * result no longer matters.
		 */
		public void stop() {
			LeaseRenewer.this.active.remove(this);
		}

		void check(long now) {
			long sinceRenewed = now - this.lastRenewed;
			if (sinceRenewed >= this.lockTtlNanos) {
				// the store may already have let the lease go: assume the worst
				lose();
				return;
			}
			if (sinceRenewed < this.periodNanos || !this.inFlight.compareAndSet(false, true)) {
				return;
			}
			this.call.renew(this, now);
		}

		/**
		 * A renewal sent at {@code started} answered.
		 * @param started when it was sent
		 * @param owned whether the lease still owns the key
		 */
		void renewed(long started, boolean owned) {
			if (owned) {
				this.lastRenewed = started;
			}
			else {
				lose();
			}
			this.inFlight.set(false);
		}

		/**
		 * A renewal failed or answered nothing: tried again at the next sweep, until a
		 * whole lock TTL has passed without success.
		 * @param failure what failed, or {@code null}
		 */
		void failed(@Nullable Throwable failure) {
			logger.warn("Could not renew an idempotency lease; retrying", failure);
			this.inFlight.set(false);
		}

		private void lose() {
			this.lost.set(true);
			stop();
		}

	}

	/**
	 * How one renewal reaches the store.
	 */
	private interface RenewCall {

		/**
		 * Sends one renewal and reports its answer to {@code renewal}, without blocking
		 * the timer thread.
		 * @param renewal the renewal to report to
		 * @param now when it is sent
		 */
		void renew(Renewal renewal, long now);

	}

	/** A blocking store's renewal, run on the renewal workers. */
	private final class BlockingRenewCall implements RenewCall {

		private final LockingStore store;

		private final Lease lease;

		private final Duration lockTtl;

		BlockingRenewCall(LockingStore store, Lease lease, Duration lockTtl) {
			this.store = store;
			this.lease = lease;
			this.lockTtl = lockTtl;
		}

		@Override
		public void renew(Renewal renewal, long now) {
			try {
				LeaseRenewer.this.workers.execute(() -> {
					long started = System.nanoTime();
					boolean owned;
					try {
						owned = this.store.renew(this.lease, this.lockTtl);
					}
					catch (RuntimeException ex) {
						renewal.failed(ex);
						return;
					}
					renewal.renewed(started, owned);
				});
			}
			catch (RejectedExecutionException ex) {
				renewal.inFlight.set(false);
			}
		}

	}

	/**
	 * A non-blocking store's renewal, subscribed on the renewal workers rather than the
	 * timer thread: a store whose {@code Mono} blocks its subscriber (an application's
	 * own {@code ReactiveLockingStore} over blocking I/O) then delays only its own
	 * renewal, never the sweep. A renewal that has not answered within a lock TTL is
	 * given up (its subscription cancelled) and tried again at the next sweep.
	 */
	private final class ReactiveRenewCall implements RenewCall {

		private final ReactiveLockingStore store;

		private final Lease lease;

		private final Duration lockTtl;

		ReactiveRenewCall(ReactiveLockingStore store, Lease lease, Duration lockTtl) {
			this.store = store;
			this.lease = lease;
			this.lockTtl = lockTtl;
		}

		@Override
		public void renew(Renewal renewal, long now) {
			try {
				LeaseRenewer.this.workers.execute(() -> subscribe(renewal));
			}
			catch (RejectedExecutionException ex) {
				renewal.inFlight.set(false);
			}
		}

		private void subscribe(Renewal renewal) {
			long started = System.nanoTime();
			AtomicBoolean answered = new AtomicBoolean();
			try {
				Mono.defer(() -> this.store.renew(this.lease, this.lockTtl))
					.timeout(this.lockTtl)
					.subscribe((owned) -> {
						if (answered.compareAndSet(false, true)) {
							renewal.renewed(started, owned);
						}
					}, (ex) -> {
						if (answered.compareAndSet(false, true)) {
							renewal.failed(ex);
						}
					}, () -> {
						if (answered.compareAndSet(false, true)) {
							renewal.failed(null);
						}
					});
			}
			catch (RuntimeException ex) {
				if (answered.compareAndSet(false, true)) {
					renewal.failed(ex);
				}
			}
		}

	}

}
