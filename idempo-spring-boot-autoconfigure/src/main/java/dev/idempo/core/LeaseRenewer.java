package dev.idempo.core;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;

import org.springframework.beans.factory.DisposableBean;

/**
 * Renews the leases of running handlers on stores whose claims expire, from one daemon
 * thread, about every third of the lock TTL. A renewal that finds the lease lost marks
 * the execution so that its response is not stored.
 *
 * @author idempo
 */
public class LeaseRenewer implements DisposableBean {

	private static final Log logger = LogFactory.getLog(LeaseRenewer.class);

	private final ScheduledThreadPoolExecutor executor;

	/**
	 * Creates a renewer with its own thread.
	 */
	public LeaseRenewer() {
		this.executor = new ScheduledThreadPoolExecutor(1, (runnable) -> {
			Thread thread = new Thread(runnable, "idempo-lease-renewal");
			thread.setDaemon(true);
			return thread;
		});
		this.executor.setRemoveOnCancelPolicy(true);
	}

	/**
	 * Renews {@code lease} until the returned handle is cancelled or the lease is lost.
	 * @param store the store that granted the lease
	 * @param lease the lease
	 * @param lockTtl the lease length
	 * @param onLost called once, on the renewal thread, if the lease is found lost
	 * @return a handle that stops renewal when cancelled
	 */
	public ScheduledFuture<?> renew(LockingStore store, Lease lease, Duration lockTtl, Runnable onLost) {
		long period = Math.max(1, lockTtl.toMillis() / 3);
		Runnable task = () -> {
			try {
				if (!store.renew(lease, lockTtl)) {
					onLost.run();
					throw new LeaseLostSignal();
				}
			}
			catch (LeaseLostSignal ex) {
				throw ex;
			}
			catch (RuntimeException ex) {
				// keep trying: the lease may survive a short store outage
				logger.warn("Could not renew an idempotency lease; retrying", ex);
			}
		};
		return this.executor.scheduleAtFixedRate(task, period, period, TimeUnit.MILLISECONDS);
	}

	@Override
	public void destroy() {
		this.executor.shutdownNow();
	}

	/** Ends a periodic task: a scheduled task that throws is not run again. */
	private static final class LeaseLostSignal extends RuntimeException {

		LeaseLostSignal() {
			super(null, null, false, false);
		}

	}

}
