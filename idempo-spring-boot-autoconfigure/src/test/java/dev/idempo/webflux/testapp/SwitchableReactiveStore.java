package dev.idempo.webflux.testapp;

import java.time.Duration;

import reactor.core.publisher.Mono;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;

/**
 * The auto-configured reactive store, which can be switched into an outage to test what
 * clients get when the store cannot be reached. Store behaviour itself always comes from
 * the real delegate.
 *
 * @author idempo
 */
public class SwitchableReactiveStore implements ReactiveLockingStore {

	private final ReactiveLockingStore delegate;

	private volatile boolean down;

	SwitchableReactiveStore(ReactiveLockingStore delegate) {
		this.delegate = delegate;
	}

	public ReactiveLockingStore delegate() {
		return this.delegate;
	}

	public void setDown(boolean down) {
		this.down = down;
	}

	@Override
	public Mono<ClaimResult> claim(String key, Duration lockTtl) {
		return whenUp(this.delegate.claim(key, lockTtl));
	}

	@Override
	public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
		return whenUp(this.delegate.complete(lease, record, ttl));
	}

	@Override
	public Mono<Boolean> release(Lease lease) {
		return whenUp(this.delegate.release(lease));
	}

	@Override
	public Mono<Boolean> renew(Lease lease, Duration lockTtl) {
		return whenUp(this.delegate.renew(lease, lockTtl));
	}

	@Override
	public boolean leaseExpires() {
		return this.delegate.leaseExpires();
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	private <T> Mono<T> whenUp(Mono<T> operation) {
		return Mono
			.defer(() -> this.down ? Mono.error(new LockingStoreException("store is down (test outage)")) : operation);
	}

}
