package dev.idempo.store;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockingStore} that keeps, in a bounded Caffeine cache of this JVM, the
 * completed records that this instance stored or was answered with, so that a replay of
 * such a record costs no round trip to the shared store.
 * <p>
 * Only a replay is ever answered from the cache: a claim of a key the cache does not hold
 * (or holds no longer), an in-progress key, and every complete, release and renewal go to
 * the store as they would without it. A copy lives at most the record's remaining time to
 * live (as the store reported it when it answered, or as this instance wrote it) and at
 * most {@code maxAge}; a replayed record whose store does not report its remaining time
 * ({@link ClaimResult.Completed#remainingTtl()} {@code null}) is not kept. The copy is
 * the record itself, fingerprint included, so a request whose fingerprint differs is
 * still rejected by the flow.
 * <p>
 * {@link #evict} drops the local copy as well as the stored record, and so does an
 * eviction on another instance where the store
 * {@linkplain LockingStore#subscribeToEvictions tells of them} (Redis, through pub/sub).
 * Elsewhere a copy evicted on another instance keeps replaying here until it reaches
 * {@code maxAge} or the record's expiry: a stale copy can only replay a response the
 * store held a moment ago, never run a handler a second time, because every execution
 * still begins with a claim in the store.
 * <p>
 * Transactional mode writes its records through {@code TransactionalStore} in the
 * application's transaction, never through this class: such a record is cached only when
 * a later claim finds it committed in the store.
 *
 * @author idempo
 */
public final class LocallyCachedLockingStore implements LockingStore, AutoCloseable {

	private static final Log logger = LogFactory.getLog(LocallyCachedLockingStore.class);

	private final LockingStore delegate;

	private final Clock clock;

	private final long maxAgeMillis;

	private final Cache<String, Copy> copies;

	/** Bumped by every eviction, so that a claim under way then keeps no copy. */
	private final AtomicLong evictions = new AtomicLong();

	private final LongAdder hits = new LongAdder();

	private final LongAdder misses = new LongAdder();

	private final @Nullable AutoCloseable evictionSubscription;

	/**
	 * Wraps a store and subscribes to its evictions.
	 * @param delegate the shared store
	 * @param maximumSize how many records the cache keeps at most; positive
	 * @param maxAge how long a copy lives at most; positive
	 * @param clock the clock that ages copies
	 */
	public LocallyCachedLockingStore(LockingStore delegate, long maximumSize, Duration maxAge, Clock clock) {
		if (maximumSize <= 0 || maxAge.isNegative() || maxAge.isZero()) {
			throw new IllegalArgumentException("'maximumSize' and 'maxAge' must be positive");
		}
		this.delegate = delegate;
		this.clock = clock;
		this.maxAgeMillis = maxAge.toMillis();
		this.copies = Caffeine.newBuilder()
			.maximumSize(maximumSize)
			.ticker(() -> TimeUnit.MILLISECONDS.toNanos(clock.millis()))
			.expireAfter(new CopyExpiry(clock))
			.build();
		this.evictionSubscription = subscribe(delegate, this::dropLocally);
	}

	private static @Nullable AutoCloseable subscribe(LockingStore store, Consumer<String> listener) {
		try {
			return store.subscribeToEvictions(listener);
		}
		catch (RuntimeException ex) {
			logger.warn("idempo's local cache could not subscribe to evictions of the " + store.name()
					+ " store: a record evicted on another instance replays here until its copy ages out", ex);
			return null;
		}
	}

	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		Copy copy = this.copies.getIfPresent(key);
		if (copy != null) {
			long remaining = copy.expiresAtMillis() - this.clock.millis();
			if (remaining > 0) {
				this.hits.increment();
				return new ClaimResult.Completed(copy.record(), Duration.ofMillis(remaining));
			}
			this.copies.asMap().remove(key, copy);
		}
		this.misses.increment();
		long generation = this.evictions.get();
		long now = this.clock.millis();
		ClaimResult result = this.delegate.claim(key, lockTtl);
		if (result instanceof ClaimResult.Completed completed && completed.remainingTtl() != null) {
			keep(key, completed.record(), now, completed.remainingTtl(), generation);
		}
		return result;
	}

	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		long generation = this.evictions.get();
		// the store's time to live starts after this call began: the copy's never later
		long now = this.clock.millis();
		boolean stored = this.delegate.complete(lease, record, ttl);
		if (stored) {
			keep(lease.key(), record, now, ttl, generation);
		}
		return stored;
	}

	private void keep(String key, StoredRecord record, long now, Duration remainingTtl, long generation) {
		long expiresAt = now + Math.min(remainingTtl.toMillis(), this.maxAgeMillis);
		if (expiresAt > this.clock.millis()) {
			this.copies.put(key, new Copy(record, expiresAt));
			if (this.evictions.get() != generation) {
				// an eviction raced this claim or complete: its record may be the evicted
				// one
				this.copies.invalidate(key);
			}
		}
	}

	@Override
	public boolean release(Lease lease) {
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

	/**
	 * Drops the local copy, then evicts the stored record (which, on stores that tell of
	 * evictions, drops every instance's copy).
	 */
	@Override
	public boolean evict(String key) {
		dropLocally(key);
		boolean evicted = this.delegate.evict(key);
		dropLocally(key);
		return evicted;
	}

	private void dropLocally(String key) {
		this.evictions.incrementAndGet();
		this.copies.invalidate(key);
	}

	@Override
	public @Nullable AutoCloseable subscribeToEvictions(Consumer<String> listener) {
		return this.delegate.subscribeToEvictions(listener);
	}

	@Override
	public Map<String, Object> checkHealth() {
		return this.delegate.checkHealth();
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	/**
	 * The store this cache is in front of.
	 * @return the shared store
	 */
	public LockingStore delegate() {
		return this.delegate;
	}

	/**
	 * Claims answered from the cache, since this store was created.
	 * @return the count
	 */
	public long hits() {
		return this.hits.sum();
	}

	/**
	 * Claims that went to the store, since this store was created.
	 * @return the count
	 */
	public long misses() {
		return this.misses.sum();
	}

	/**
	 * How many copies the cache holds (approximately: expired ones may still count).
	 * @return the count
	 */
	public long size() {
		return this.copies.estimatedSize();
	}

	/**
	 * Ends the subscription to evictions.
	 * @throws Exception if the store fails to end it
	 */
	@Override
	public void close() throws Exception {
		if (this.evictionSubscription != null) {
			this.evictionSubscription.close();
		}
	}

	private record Copy(StoredRecord record, long expiresAtMillis) {
	}

	/** Each copy expires when it was computed to, whatever is read or written after. */
	private record CopyExpiry(Clock clock) implements Expiry<String, Copy> {

		@Override
		public long expireAfterCreate(String key, Copy copy, long currentTime) {
			return TimeUnit.MILLISECONDS.toNanos(Math.max(0, copy.expiresAtMillis() - this.clock.millis()));
		}

		@Override
		public long expireAfterUpdate(String key, Copy copy, long currentTime, long currentDuration) {
			return expireAfterCreate(key, copy, currentTime);
		}

		@Override
		public long expireAfterRead(String key, Copy copy, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
