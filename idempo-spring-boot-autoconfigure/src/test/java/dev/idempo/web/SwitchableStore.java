package dev.idempo.web;

import java.time.Duration;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;

/**
 * A real store that can be switched into an outage, to test what clients get when the
 * store cannot be reached. Store behaviour itself always comes from the real delegate.
 *
 * @author idempo
 */
class SwitchableStore implements LockingStore {

	private final LockingStore delegate;

	private volatile boolean down;

	SwitchableStore(LockingStore delegate) {
		this.delegate = delegate;
	}

	void setDown(boolean down) {
		this.down = down;
	}

	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		checkUp();
		return this.delegate.claim(key, lockTtl);
	}

	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		checkUp();
		return this.delegate.complete(lease, record, ttl);
	}

	@Override
	public boolean release(Lease lease) {
		checkUp();
		return this.delegate.release(lease);
	}

	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		checkUp();
		return this.delegate.renew(lease, lockTtl);
	}

	@Override
	public boolean leaseExpires() {
		return this.delegate.leaseExpires();
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	private void checkUp() {
		if (this.down) {
			throw new LockingStoreException("store is down (test outage)");
		}
	}

}
