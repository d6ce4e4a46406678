package dev.idempo.autoconfigure;

import java.util.concurrent.CompletableFuture;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.LockingStore;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Reaches the store once when the application has started, the way health checks do
 * ({@link LockingStore#checkHealth()}), and if it cannot, logs one WARN line naming the
 * store, its address and the cause, and telling an outage (requests get 503 until the
 * store answers) from a configuration error that will not go away by itself
 * ({@link StoreConnectionFailure}). The application starts either way, as it did before;
 * the check runs on a daemon thread of its own so that a store that does not answer never
 * delays start-up.
 *
 * @author idempo
 */
public class IdempotencyStoreStartupCheck implements SmartInitializingSingleton, DisposableBean {

	private static final Log logger = LogFactory.getLog(IdempotencyStoreStartupCheck.class);

	private final @Nullable LockingStore store;

	private final String storeName;

	private final String address;

	private final boolean failOpen;

	private final CompletableFuture<Void> done = new CompletableFuture<>();

	private volatile boolean stopped;

	/**
	 * Creates a check.
	 * @param store the store to reach; {@code null} (the application declares its own
	 * store) checks nothing
	 * @param storeName the store type, as in {@code idempo.store.type}
	 * @param address where the store connects, without credentials
	 * @param failOpen whether requests run unprotected while the store cannot be reached
	 */
	public IdempotencyStoreStartupCheck(@Nullable LockingStore store, String storeName, String address,
			boolean failOpen) {
		this.store = store;
		this.storeName = storeName;
		this.address = address;
		this.failOpen = failOpen;
	}

	@Override
	public void afterSingletonsInstantiated() {
		LockingStore store = this.store;
		if (store == null) {
			this.done.complete(null);
			return;
		}
		Thread thread = new Thread(() -> check(store), "idempo-store-check");
		thread.setDaemon(true);
		thread.start();
	}

	private void check(LockingStore store) {
		try {
			store.checkHealth();
		}
		catch (RuntimeException ex) {
			// a store closed under the check, as the context shuts down, is no news
			if (!this.stopped) {
				logger.warn(StoreConnectionFailure.classify(ex)
					.startupMessage(this.storeName, this.address, this.failOpen));
			}
		}
		finally {
			this.done.complete(null);
		}
	}

	/**
	 * Completes when the check has run (and logged, if the store could not be reached).
	 * @return the completion
	 */
	CompletableFuture<Void> done() {
		return this.done;
	}

	@Override
	public void destroy() {
		this.stopped = true;
	}

}
