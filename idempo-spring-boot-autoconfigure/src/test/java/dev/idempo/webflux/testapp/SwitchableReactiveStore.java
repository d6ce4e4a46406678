package dev.idempo.webflux.testapp;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

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

	private final Map<String, AtomicInteger> inProgressAnswers = new ConcurrentHashMap<>();

	SwitchableReactiveStore(ReactiveLockingStore delegate) {
		this.delegate = delegate;
	}

	public ReactiveLockingStore delegate() {
		return this.delegate;
	}

	public void setDown(boolean down) {
		this.down = down;
	}

	/**
	 * How many claims of a key the store answered with "in progress".
	 * @param key the storage key
	 * @return the count
	 */
	public int inProgressAnswers(String key) {
		AtomicInteger answers = this.inProgressAnswers.get(key);
		return (answers != null) ? answers.get() : 0;
	}

	@Override
	public Mono<ClaimResult> claim(String key, Duration lockTtl) {
		return whenUp(this.delegate.claim(key, lockTtl)).doOnNext((claim) -> {
			if (claim instanceof ClaimResult.InProgress) {
				this.inProgressAnswers.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			}
		});
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
