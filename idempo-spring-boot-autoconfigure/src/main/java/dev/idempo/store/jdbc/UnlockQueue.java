package dev.idempo.store.jdbc;

import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.jdbc.KeyGuard.Holder;

/**
 * The unlocks that wait for one lock session: the locks of claims that are over (their
 * complete or release could not run or failed, or a failed claim may have taken its lock)
 * but may still be held on the session. Until its unlock has run, a holder stays in the
 * {@link KeyGuard} as {@code UNLOCKING}, so its key stays taken in this JVM as it is in
 * the database. Added to without the session's run lock; taken, oldest first, only by
 * whoever runs the session, into its next batch (or, if no request comes, by a
 * maintenance task). A session whose queued unlocks fail on a live connection
 * {@value #MAX_FAILED_UNLOCKS} times in a row is ended: ending it is the one sure way to
 * free its locks.
 *
 * @author idempo
 */
final class UnlockQueue {

	/** Queued unlocks that may fail in a row on a live session before it is ended. */
	static final int MAX_FAILED_UNLOCKS = 3;

	private final Deque<Holder> pending = new ConcurrentLinkedDeque<>();

	private final AtomicBoolean drainScheduled = new AtomicBoolean();

	// written under the session's run lock
	private volatile int failures;

	/**
	 * Queues the unlock of {@code holder}, which must already be {@code UNLOCKING}.
	 * @param holder the holder
	 */
	void add(Holder holder) {
		this.pending.add(holder);
	}

	boolean contains(Holder holder) {
		return this.pending.contains(holder);
	}

	boolean isEmpty() {
		return this.pending.isEmpty();
	}

	/**
	 * Whether queued unlocks wait to be run soon: some are queued and the last attempt
	 * did not fail (after a failure, the next session check retries).
	 * @return whether a drain is due
	 */
	boolean isDrainDue() {
		return !this.pending.isEmpty() && this.failures == 0;
	}

	/**
	 * Takes up to {@code max} queued unlocks, oldest first, for the session's next batch;
	 * those whose connection is gone (their lock with it) are forgotten instead. If the
	 * lock of one is, by now, shared with another claim of this JVM on the session
	 * (colliding PostgreSQL lock ids), a blind unlock could free that claim's count: then
	 * nothing is taken, the holder goes back to the queue, and the caller must end the
	 * session, the one sure way to free its locks. Requires the session's run lock.
	 * @param generation the generation of the session's open connection, 0 if none
	 * @param guard the guard the forgotten holders leave
	 * @param max the most to take
	 * @return the holders whose locks to free, or {@code null} if the session must be
	 * ended
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

	/**
	 * The taken unlocks ran: their keys are free.
	 * @param holders the holders
	 * @param guard the guard they leave
	 */
	void ran(List<Holder> holders, KeyGuard guard) {
		if (!holders.isEmpty()) {
			this.failures = 0;
			holders.forEach(guard::forget);
		}
	}

	/**
	 * The taken unlocks failed on a live session: they go back to the front of the queue,
	 * to run before the session's next statement.
	 * @param holders the holders
	 * @return whether the session has now failed too often and must be ended
	 */
	boolean failed(List<Holder> holders) {
		for (int i = holders.size() - 1; i >= 0; i--) {
			this.pending.addFirst(holders.get(i));
		}
		return ++this.failures >= MAX_FAILED_UNLOCKS;
	}

	/**
	 * Forgets every queued unlock: the session's connection is gone, and its locks with
	 * it. Requires the session's run lock.
	 * @param guard the guard the holders leave
	 */
	void clear(KeyGuard guard) {
		this.failures = 0;
		Holder holder;
		while ((holder = this.pending.poll()) != null) {
			guard.forget(holder);
		}
	}

	/**
	 * Marks that a maintenance task will drain this queue.
	 * @return {@code false} if one already will
	 */
	boolean scheduleDrain() {
		return this.drainScheduled.compareAndSet(false, true);
	}

	/**
	 * Marks that the scheduled drain task has started (or could not be scheduled).
	 */
	void drainStarted() {
		this.drainScheduled.set(false);
	}

}
