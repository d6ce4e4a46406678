package dev.idempo.web;

import java.util.concurrent.atomic.AtomicLong;

import org.springframework.util.Assert;

/**
 * The bytes that idempo may hold in memory at once, across all requests of this instance:
 * request bodies held whole for fingerprints (those that cannot stream to the handler:
 * see {@link BufferedBodyRequest}) and responses held back until they are stored. A keyed
 * request whose body is held reserves its bytes as they arrive; one that would exceed the
 * budget is answered 503 before its body is held, instead of the instance running out of
 * heap under many large concurrent bodies. A response that would exceed it is sent as
 * written and not stored, like one over {@code idempo.max-response-size}.
 *
 * @author idempo
 */
public final class BufferBudget {

	/** A budget that never refuses. */
	public static final BufferBudget UNLIMITED = new BufferBudget(Long.MAX_VALUE);

	private final long maxBytes;

	private final AtomicLong used = new AtomicLong();

	private final AtomicLong refused = new AtomicLong();

	/**
	 * Creates a budget.
	 * @param maxBytes the most bytes held at once, positive
	 */
	public BufferBudget(long maxBytes) {
		Assert.isTrue(maxBytes > 0, "'maxBytes' must be positive");
		this.maxBytes = maxBytes;
	}

	/**
	 * Reserves {@code bytes}, unless that would exceed the budget.
	 * @param bytes how many
	 * @return whether they were reserved
	 */
	boolean tryReserve(long bytes) {
		while (true) {
			long current = this.used.get();
			if (bytes > this.maxBytes - current) {
				this.refused.incrementAndGet();
				return false;
			}
			if (this.used.compareAndSet(current, current + bytes)) {
				return true;
			}
		}
	}

	/**
	 * Reserves {@code bytes} whether or not they fit: for what must be held anyway, so
	 * that other requests see the memory in use.
	 * @param bytes how many
	 */
	void reserve(long bytes) {
		this.used.addAndGet(bytes);
	}

	void release(long bytes) {
		this.used.addAndGet(-bytes);
	}

	/**
	 * The most bytes held at once.
	 * @return the budget
	 */
	public long maxBytes() {
		return this.maxBytes;
	}

	/**
	 * The bytes reserved now.
	 * @return the bytes in use
	 */
	public long used() {
		return this.used.get();
	}

	/**
	 * How many reservations were refused since the start.
	 * @return the count
	 */
	public long refused() {
		return this.refused.get();
	}

}
