package dev.idempo.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.RecordState;
import dev.idempo.store.StoredRecord;

import org.springframework.util.Assert;

/**
 * A {@link LockingStore} held in this JVM's memory. It protects one application instance
 * only: two instances behind a load balancer each run the handler once.
 * <p>
 * Claims are leases that expire after the lock TTL unless renewed, like the Redis
 * store's, so both behave the same under the contract tests. Completed records are
 * bounded by count and by bytes; when either bound is exceeded the oldest completed
 * records are evicted first (a retry with an evicted key runs the handler again). Expired
 * records are removed on access and while evicting.
 *
 * @author idempo
 */
public final class InMemoryLockingStore implements LockingStore {

	private static final Log logger = LogFactory.getLog(InMemoryLockingStore.class);

	/** Rough per-record bookkeeping cost on top of key, fingerprint and body. */
	private static final int RECORD_OVERHEAD = 128;

	private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

	private final ConcurrentLinkedQueue<Done> completionOrder = new ConcurrentLinkedQueue<>();

	private final AtomicLong completedCount = new AtomicLong();

	private final AtomicLong completedBytes = new AtomicLong();

	private final AtomicLong sequence = new AtomicLong();

	private final AtomicLong expiredEvictions = new AtomicLong();

	private final AtomicLong capacityEvictions = new AtomicLong();

	private final AtomicBoolean capacityEvictionLogged = new AtomicBoolean();

	/**
	 * Owner tokens only need to be unique: they never leave this JVM, and the only code
	 * holding a lease is the request that claimed it, so nothing can guess one. A counter
	 * replaces {@code UUID.randomUUID()}, which took a shared lock on the platform's
	 * {@code SecureRandom} for every claim.
	 */
	private final AtomicLong tokens = new AtomicLong();

	private final Clock clock;

	private final long maxEntries;

	private final long maxBytes;

	private final boolean refuseWhenFull;

	/**
	 * Creates a store.
	 * @param clock the clock that decides expiry
	 * @param maxEntries the most completed records kept
	 * @param maxBytes the most bytes of completed records kept
	 */
	public InMemoryLockingStore(Clock clock, long maxEntries, long maxBytes) {
		this(clock, maxEntries, maxBytes, false);
	}

	/**
	 * Creates a store.
	 * @param clock the clock that decides expiry
	 * @param maxEntries the most completed records kept
	 * @param maxBytes the most bytes of completed records kept
	 * @param refuseWhenFull whether a store full of unexpired records refuses new claims
	 * (they fail, so the request gets 503) rather than evicting the oldest records, which
	 * re-opens their keys
	 */
	public InMemoryLockingStore(Clock clock, long maxEntries, long maxBytes, boolean refuseWhenFull) {
		Assert.notNull(clock, "'clock' must not be null");
		Assert.isTrue(maxEntries > 0, "'maxEntries' must be positive");
		Assert.isTrue(maxBytes > 0, "'maxBytes' must be positive");
		this.clock = clock;
		this.maxEntries = maxEntries;
		this.maxBytes = maxBytes;
		this.refuseWhenFull = refuseWhenFull;
	}

	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		Instant now = this.clock.instant();
		// only a new claim is refused when full: replays and 409s are answered as ever
		boolean full = this.refuseWhenFull && isFull(now);
		ClaimResult[] result = new ClaimResult[1];
		Done[] replaced = new Done[1];
		this.entries.compute(key, (k, existing) -> {
			if (existing instanceof Done done && done.expiresAt().isAfter(now)) {
				result[0] = new ClaimResult.Completed(done.record(), Duration.between(now, done.expiresAt()));
				return existing;
			}
			if (existing instanceof Claim claim && claim.leaseExpiresAt().isAfter(now)) {
				result[0] = ClaimResult.InProgress.instance();
				return existing;
			}
			if (full) {
				return existing;
			}
			if (existing instanceof Done done) {
				forget(done);
				replaced[0] = done;
			}
			String token = Long.toHexString(this.tokens.incrementAndGet());
			result[0] = new ClaimResult.Acquired(new Lease(k, token));
			return new Claim(token, now.plus(lockTtl));
		});
		if (replaced[0] != null) {
			// drop the expired body now rather than when it reaches the head of the
			// queue,
			// and outside compute, which must stay short
			this.completionOrder.remove(replaced[0]);
		}
		if (result[0] == null) {
			throw new LockingStoreException("The in-memory idempotency store is full of unexpired records "
					+ "(idempo.store.memory.max-entries=" + this.maxEntries + ", max-size=" + this.maxBytes
					+ " bytes) and refuses new claims (idempo.store.memory.when-full=refuse)");
		}
		return result[0];
	}

	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		Assert.isTrue(!ttl.isNegative() && !ttl.isZero(), "'ttl' must be positive");
		Instant now = this.clock.instant();
		long size = (long) record.response().length + record.fingerprint().length() + lease.key().length()
				+ RECORD_OVERHEAD;
		Done done = new Done(lease.key(), record, now.plus(ttl), size, this.sequence.incrementAndGet());
		boolean[] stored = new boolean[1];
		this.entries.computeIfPresent(lease.key(), (k, existing) -> {
			if (owns(existing, lease, now)) {
				stored[0] = true;
				return done;
			}
			return isExpiredClaimOf(existing, lease, now) ? null : existing;
		});
		if (stored[0]) {
			this.completedCount.incrementAndGet();
			this.completedBytes.addAndGet(size);
			this.completionOrder.add(done);
			evict(now);
		}
		return stored[0];
	}

	@Override
	public boolean release(Lease lease) {
		Instant now = this.clock.instant();
		boolean[] released = new boolean[1];
		this.entries.computeIfPresent(lease.key(), (k, existing) -> {
			if (existing instanceof Claim claim && claim.token().equals(lease.token())) {
				// an expired lease is gone for good, as a Redis key would be
				released[0] = claim.leaseExpiresAt().isAfter(now);
				return null;
			}
			return existing;
		});
		return released[0];
	}

	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		Instant now = this.clock.instant();
		boolean[] renewed = new boolean[1];
		this.entries.computeIfPresent(lease.key(), (k, existing) -> {
			if (owns(existing, lease, now)) {
				renewed[0] = true;
				return new Claim(lease.token(), now.plus(lockTtl));
			}
			return isExpiredClaimOf(existing, lease, now) ? null : existing;
		});
		return renewed[0];
	}

	@Override
	public boolean leaseExpires() {
		return true;
	}

	@Override
	public String name() {
		return "memory";
	}

	@Override
	public RecordState inspect(String key) {
		Entry entry = this.entries.get(key);
		Instant now = this.clock.instant();
		if (entry instanceof Claim claim && claim.leaseExpiresAt().isAfter(now)) {
			return new RecordState(true, null, null);
		}
		if (entry instanceof Done done && done.expiresAt().isAfter(now)) {
			return new RecordState(false, done.record(), done.expiresAt());
		}
		return RecordState.ABSENT;
	}

	@Override
	public boolean evict(String key) {
		Entry entry = this.entries.get(key);
		if (entry instanceof Done done && this.entries.remove(key, done)) {
			this.completionOrder.remove(done);
			forget(done);
			return done.expiresAt().isAfter(this.clock.instant());
		}
		return false;
	}

	/**
	 * Forgets every claim and record, as if the store were new (its eviction counters
	 * aside): for tests that share one application context, between tests, never while
	 * requests are in flight.
	 */
	public void clear() {
		this.entries.clear();
		this.completionOrder.clear();
		this.completedCount.set(0);
		this.completedBytes.set(0);
	}

	/**
	 * Always answers: tells how many completed records are held and their bytes.
	 * @return {@code entries} and {@code bytes}
	 */
	@Override
	public Map<String, Object> checkHealth() {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("entries", size());
		details.put("bytes", sizeInBytes());
		return details;
	}

	/**
	 * The number of completed records currently held, expired or not.
	 * @return the number of completed records
	 */
	public long size() {
		return this.completedCount.get();
	}

	/**
	 * The bytes accounted to completed records currently held.
	 * @return the accounted bytes
	 */
	public long sizeInBytes() {
		return this.completedBytes.get();
	}

	/**
	 * How many records were dropped after they expired (harmless: an expired record is as
	 * if it never existed).
	 * @return the count since the store was created
	 */
	public long expiredEvictions() {
		return this.expiredEvictions.get();
	}

	/**
	 * How many records were dropped before they expired, because the store was full
	 * ({@code max-entries} or {@code max-size}): each re-opened its key, so a retry with
	 * it runs the handler again. The first is logged as a warning.
	 * @return the count since the store was created
	 */
	public long capacityEvictions() {
		return this.capacityEvictions.get();
	}

	private static boolean owns(@Nullable Entry entry, Lease lease, Instant now) {
		return entry instanceof Claim claim && claim.token().equals(lease.token())
				&& claim.leaseExpiresAt().isAfter(now);
	}

	/** An expired claim of this very lease: dead, and nobody else will clean it up. */
	private static boolean isExpiredClaimOf(@Nullable Entry entry, Lease lease, Instant now) {
		return entry instanceof Claim claim && claim.token().equals(lease.token())
				&& !claim.leaseExpiresAt().isAfter(now);
	}

	/**
	 * Drops the oldest records while over budget or expired. It does not look the oldest
	 * record up first to see whether it is still in the map: the only way one leaves the
	 * map otherwise is a claim replacing it once expired, which takes it off the queue
	 * itself, and that lookup (of the coldest entry, a cache miss) was a visible part of
	 * every stored response's cost.
	 */
	/**
	 * Whether the store is at its bounds once expired records are dropped: those at the
	 * head of the completion order first, and, if it still looks full, every expired one
	 * (records of different TTLs expire out of completion order).
	 */
	private boolean isFull(Instant now) {
		evictExpired(now);
		if (!isAtBounds()) {
			return false;
		}
		for (Done done : this.completionOrder) {
			if (!done.expiresAt().isAfter(now) && this.entries.remove(done.key(), done)) {
				this.completionOrder.remove(done);
				forget(done);
				this.expiredEvictions.incrementAndGet();
			}
		}
		return isAtBounds();
	}

	private boolean isAtBounds() {
		return this.completedCount.get() >= this.maxEntries || this.completedBytes.get() >= this.maxBytes;
	}

	private void evictExpired(Instant now) {
		Done oldest;
		while ((oldest = this.completionOrder.peek()) != null && !oldest.expiresAt().isAfter(now)) {
			if (this.completionOrder.remove(oldest) && this.entries.remove(oldest.key(), oldest)) {
				forget(oldest);
				this.expiredEvictions.incrementAndGet();
			}
		}
	}

	private void evict(Instant now) {
		Done oldest;
		while ((oldest = this.completionOrder.peek()) != null) {
			boolean overBudget = !this.refuseWhenFull
					&& (this.completedCount.get() > this.maxEntries || this.completedBytes.get() > this.maxBytes);
			if (!overBudget && oldest.expiresAt().isAfter(now)) {
				return;
			}
			if (this.completionOrder.remove(oldest) && this.entries.remove(oldest.key(), oldest)) {
				forget(oldest);
				if (oldest.expiresAt().isAfter(now)) {
					capacityEvicted();
				}
				else {
					this.expiredEvictions.incrementAndGet();
				}
			}
		}
	}

	private void capacityEvicted() {
		this.capacityEvictions.incrementAndGet();
		if (this.capacityEvictionLogged.compareAndSet(false, true)) {
			logger.warn("The in-memory idempotency store is full (idempo.store.memory.max-entries=" + this.maxEntries
					+ ", max-size=" + this.maxBytes + " bytes) and dropped a record before it expired: a retry "
					+ "with its key runs the handler again. Raise the limits or use a shared store; "
					+ "idempo.store.memory.evictions{reason=capacity} counts these (logged once).");
		}
	}

	private void forget(Done done) {
		this.completedCount.decrementAndGet();
		this.completedBytes.addAndGet(-done.size());
	}

	private sealed interface Entry permits Claim, Done {

	}

	private record Claim(String token, Instant leaseExpiresAt) implements Entry {
	}

	private record Done(String key, StoredRecord record, Instant expiresAt, long size, long sequence) implements Entry {

		@Override
		public boolean equals(Object other) {
			return this == other;
		}

		@Override
		public int hashCode() {
			return Long.hashCode(this.sequence);
		}

	}

}
