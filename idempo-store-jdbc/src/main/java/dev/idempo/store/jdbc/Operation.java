package dev.idempo.store.jdbc;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.KeyGuard.Holder;

import org.springframework.util.Assert;

/**
 * One claim, complete or release waiting to run on a lock session, and its outcome: its
 * state moves {@code QUEUED -> RUNNING -> DONE} or {@code QUEUED -> CANCELLED} by
 * compare-and-set, so it is cancelled before any statement of it was sent or waited for
 * until it ends. The outcome is written before {@code DONE} is published.
 *
 * @author idempo
 */
final class Operation {

	private static final int QUEUED = 0;

	private static final int RUNNING = 1;

	private static final int DONE = 2;

	private static final int CANCELLED = 3;

	enum Kind {

		CLAIM, COMPLETE, RELEASE

	}

	final Kind kind;

	final Holder holder;

	final @Nullable StoredRecord record;

	/** The record's time to live in microseconds (complete only). */
	final long ttlMicros;

	/** Until when ({@link System#nanoTime()}) the caller waits for a claim to start. */
	private final long deadline;

	private final Thread waiter;

	private final AtomicInteger state = new AtomicInteger(QUEUED);

	/** How often a claim went back to the queue because its session died under it. */
	private int retries;

	private boolean succeeded;

	private @Nullable StoredRecord found;

	/** A claim whose record expired between its two statements. */
	private boolean vanished;

	private @Nullable Throwable failure;

	private Operation(Kind kind, Holder holder, @Nullable StoredRecord record, long ttlMicros, long deadline) {
		this.kind = kind;
		this.holder = holder;
		this.record = record;
		this.ttlMicros = ttlMicros;
		this.deadline = deadline;
		this.waiter = Thread.currentThread();
	}

	static Operation claim(Holder holder, long deadline) {
		return new Operation(Kind.CLAIM, holder, null, 0, deadline);
	}

	static Operation complete(Holder holder, StoredRecord record, long ttlMicros) {
		return new Operation(Kind.COMPLETE, holder, record, ttlMicros, 0);
	}

	static Operation release(Holder holder) {
		return new Operation(Kind.RELEASE, holder, null, 0, 0);
	}

	/** Takes the operation into a batch; {@code false} if cancelled or already taken. */
	boolean start() {
		return this.state.compareAndSet(QUEUED, RUNNING);
	}

	/** Gives up an unstarted operation; {@code false} if started: then wait for it. */
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
	 * Whether its caller still waits for it to start: a complete or release always, a
	 * claim until its deadline.
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
	 * Ends the operation: a claim locked (or {@code found} a record), stored, released.
	 */
	void succeed(boolean succeeded, @Nullable StoredRecord found) {
		this.succeeded = succeeded;
		this.found = found;
		finish();
	}

	/**
	 * Ends a claim that met a record which was gone by the time it was read: it expired
	 * (or its expiry was deleted) between the claim's two statements. The key is free
	 * again, and the claim is retried rather than answered as in progress.
	 */
	void vanished() {
		this.vanished = true;
		succeed(false, null);
	}

	boolean hasVanished() {
		return this.vanished;
	}

	void fail(Throwable failure) {
		this.failure = failure;
		finish();
	}

	private void finish() {
		Assert.state(this.state.compareAndSet(RUNNING, DONE), "Operation not running");
		LockSupport.unpark(this.waiter);
	}

	/** Wakes its waiter to take the session. */
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
