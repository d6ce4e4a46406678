package dev.idempo.store.jdbc;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.KeyGuard.Holder;

import org.springframework.util.Assert;

/**
 * One store operation waiting to run on a lock session: a claim, a complete or a release,
 * made by the request thread that waits for it and run by whichever thread holds the
 * session next (possibly that same thread), batched with the other operations queued
 * there.
 * <p>
 * Its state moves {@code QUEUED -> RUNNING -> DONE} or {@code QUEUED -> CANCELLED}, each
 * step a compare-and-set, so that a caller whose time is up either cancels its operation
 * before any statement of it was sent ({@link #cancel()}) or, once it runs, waits for its
 * outcome: an operation is never abandoned half run (a lock taken for a caller that is
 * gone would be an orphan). The runner may put a running operation back in the queue
 * ({@link #requeue()}) when its session died before the operation did anything. The
 * outcome is written before {@code DONE} is published, and read after it is seen.
 *
 * @author idempo
 */
final class Operation {

	private static final int QUEUED = 0;

	private static final int RUNNING = 1;

	private static final int DONE = 2;

	private static final int CANCELLED = 3;

	/** What an operation does. */
	enum Kind {

		/** Take the lock of a key unless its record exists; read the record. */
		CLAIM,

		/** Store a record while the claim still holds its lock, commit, unlock. */
		COMPLETE,

		/** Unlock without storing. */
		RELEASE

	}

	final Kind kind;

	final Holder holder;

	final @Nullable StoredRecord record;

	/** The record's time to live in microseconds (complete only). */
	final long ttlMicros;

	/**
	 * The {@link System#nanoTime()} until which the caller waits for a claim to start;
	 * unused for completes and releases.
	 */
	private final long deadline;

	private final Thread waiter;

	private final AtomicInteger state = new AtomicInteger(QUEUED);

	/** How often a claim went back to the queue because its session died under it. */
	private int retries;

	// the outcome: written by the runner before DONE, read by the waiter after it

	private boolean succeeded;

	private @Nullable StoredRecord found;

	private @Nullable Throwable failure;

	private Operation(Kind kind, Holder holder, @Nullable StoredRecord record, long ttlMicros, long deadline) {
		this.kind = kind;
		this.holder = holder;
		this.record = record;
		this.ttlMicros = ttlMicros;
		this.deadline = deadline;
		this.waiter = Thread.currentThread();
	}

	/**
	 * A claim.
	 * @param holder the claim's holder in the guard
	 * @param deadline the {@link System#nanoTime()} after which its caller no longer
	 * waits for it to start: a claim whose session died under it goes back to the queue
	 * only before then
	 */
	static Operation claim(Holder holder, long deadline) {
		return new Operation(Kind.CLAIM, holder, null, 0, deadline);
	}

	static Operation complete(Holder holder, StoredRecord record, long ttlMicros) {
		return new Operation(Kind.COMPLETE, holder, record, ttlMicros, 0);
	}

	static Operation release(Holder holder) {
		return new Operation(Kind.RELEASE, holder, null, 0, 0);
	}

	/**
	 * The runner takes a queued operation into the batch it is about to send.
	 * @return {@code false} if it was cancelled (or already taken)
	 */
	boolean start() {
		return this.state.compareAndSet(QUEUED, RUNNING);
	}

	/**
	 * The waiter gives up on an operation that has not started.
	 * @return {@code false} if it has started (or ended): then it must be waited for
	 */
	boolean cancel() {
		return this.state.compareAndSet(QUEUED, CANCELLED);
	}

	/**
	 * Puts a running operation that did nothing back in the queue; the runner re-adds it.
	 */
	void requeue() {
		Assert.state(this.state.get() == RUNNING, "Operation not running");
		this.retries++;
		this.state.set(QUEUED);
	}

	int retries() {
		return this.retries;
	}

	/**
	 * Whether the caller still waits for the operation to start, so that it is worth
	 * putting back in the queue: always for a complete or release, for a claim until its
	 * deadline.
	 * @return whether its caller still waits
	 */
	boolean isAwaited() {
		return this.kind != Kind.CLAIM || System.nanoTime() - this.deadline < 0;
	}

	boolean isQueued() {
		return this.state.get() == QUEUED;
	}

	boolean isDone() {
		return this.state.get() == DONE;
	}

	/**
	 * Ends the operation with a result and wakes its waiter.
	 * @param succeeded claim: locked; complete: stored; release: released
	 * @param found claim: the unexpired record it found, if any
	 */
	void succeed(boolean succeeded, @Nullable StoredRecord found) {
		this.succeeded = succeeded;
		this.found = found;
		finish();
	}

	/**
	 * Ends the operation with a failure and wakes its waiter.
	 * @param failure what the caller gets
	 */
	void fail(Throwable failure) {
		this.failure = failure;
		finish();
	}

	private void finish() {
		Assert.state(this.state.compareAndSet(RUNNING, DONE), "Operation not running");
		LockSupport.unpark(this.waiter);
	}

	/**
	 * Wakes the thread that waits for this operation, so that it can take the session.
	 */
	void wake() {
		LockSupport.unpark(this.waiter);
	}

	boolean succeeded() {
		return this.succeeded;
	}

	@Nullable StoredRecord found() {
		return this.found;
	}

	@Nullable Throwable failure() {
		return this.failure;
	}

	@Override
	public String toString() {
		return this.kind + "[" + this.holder.key + "]";
	}

}
