package dev.idempo.store.jdbc;

import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.jdbc.KeyGuard.Holder;

/**
 * The unlocks waiting for one lock session: locks of claims that are over but may still
 * be held there, whose keys stay taken ({@code UNLOCKING}) until they have run. Added to
 * freely; taken only by whoever holds the session.
 *
 * @author idempo
 */
final class UnlockQueue {

	/** Failures in a row on a live session after which it is ended. */
	static final int MAX_FAILED_UNLOCKS = 3;

	private final Deque<Holder> pending = new ConcurrentLinkedDeque<>();

	private final AtomicBoolean drainScheduled = new AtomicBoolean();

	// written under the session's run lock
	private volatile int failures;

	/** Queues the unlock of a holder already {@code UNLOCKING}. */
	void add(Holder holder) {
		this.pending.add(holder);
	}

	boolean contains(Holder holder) {
		return this.pending.contains(holder);
	}

	boolean isEmpty() {
		return this.pending.isEmpty();
	}

	/** Whether unlocks are queued and the last run did not fail (else checks retry). */
	boolean isDrainDue() {
		return !this.pending.isEmpty() && this.failures == 0;
	}

	/**
	 * Takes up to {@code max} unlocks, oldest first, forgetting those of another
	 * connection; {@code null} (nothing taken) if one's lock is shared with another
	 * claim: a blind unlock could free its count, so the caller must end the session.
	 */
	@Nullable List<Holder> take(long generation, KeyGuard guard, int max) {
		List<Holder> taken = new ArrayList<>();
		Holder holder;
		while (taken.size() < max && (holder = this.pending.poll()) != null) {
			if (generation != 0 && holder.generation() == generation) {
				taken.add(holder);
				if (guard.sharesLock(holder)) {
					for (int i = taken.size() - 1; i >= 0; i--) {
						this.pending.addFirst(taken.get(i));
					}
					return null;
				}
			}
			else {
				guard.forget(holder);
			}
		}
		return taken;
	}

	void ran(List<Holder> holders, KeyGuard guard) {
		if (!holders.isEmpty()) {
			this.failures = 0;
			holders.forEach(guard::forget);
		}
	}

	/** Requeues failed unlocks first; {@code true} if the session must now be ended. */
	boolean failed(List<Holder> holders) {
		for (int i = holders.size() - 1; i >= 0; i--) {
			this.pending.addFirst(holders.get(i));
		}
		return ++this.failures >= MAX_FAILED_UNLOCKS;
	}

	/** Forgets every queued unlock: the connection, and its locks, are gone. */
	void clear(KeyGuard guard) {
		this.failures = 0;
		Holder holder;
		while ((holder = this.pending.poll()) != null) {
			guard.forget(holder);
		}
	}

	/** Marks that a maintenance task will drain this queue; {@code false} if one will. */
	boolean scheduleDrain() {
		return this.drainScheduled.compareAndSet(false, true);
	}

	void drainStarted() {
		this.drainScheduled.set(false);
	}

}
