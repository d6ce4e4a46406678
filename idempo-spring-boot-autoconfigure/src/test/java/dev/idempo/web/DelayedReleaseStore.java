package dev.idempo.web;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.RecordState;
import dev.idempo.store.StoredRecord;

/**
 * A real store whose releases are slow: each waits until another claim of its key has
 * been answered, or at most {@link #MAX_WAIT}, before it reaches the store. A client that
 * could read the whole response before its key was released then retries into that wait,
 * and deterministically meets its own key in progress, however fast the store is. Store
 * behaviour itself always comes from the real delegate.
 *
 * @author idempo
 */
class DelayedReleaseStore implements LockingStore, AutoCloseable {

	/**
	 * How long a release waits for a retry that can only come if the client received the
	 * end of the response first: the time that fix costs each release of these tests.
	 */
	static final Duration MAX_WAIT = Duration.ofMillis(100);

	private final LockingStore delegate;

	private final Map<String, CountDownLatch> releasing = new ConcurrentHashMap<>();

	DelayedReleaseStore(LockingStore delegate) {
		this.delegate = delegate;
	}

	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		ClaimResult claim = this.delegate.claim(key, lockTtl);
		CountDownLatch release = this.releasing.get(key);
		if (release != null) {
			release.countDown();
		}
		return claim;
	}

	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		return this.delegate.complete(lease, record, ttl);
	}

	@Override
	public boolean release(Lease lease) {
		CountDownLatch claimed = new CountDownLatch(1);
		this.releasing.put(lease.key(), claimed);
		try {
			claimed.await(MAX_WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			this.releasing.remove(lease.key(), claimed);
		}
		return this.delegate.release(lease);
	}

	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		return this.delegate.renew(lease, lockTtl);
	}

	@Override
	public boolean leaseExpires() {
		return this.delegate.leaseExpires();
	}

	@Override
	public RecordState inspect(String key) {
		return this.delegate.inspect(key);
	}

	@Override
	public boolean evict(String key) {
		return this.delegate.evict(key);
	}

	@Override
	public Map<String, Object> checkHealth() {
		return this.delegate.checkHealth();
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	@Override
	public void close() throws Exception {
		if (this.delegate instanceof AutoCloseable closeable) {
			closeable.close();
		}
	}

}
