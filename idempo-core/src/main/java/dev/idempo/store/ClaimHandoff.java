package dev.idempo.store;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * How a blocking {@link LockingStore#claim claim} hands its answer to a reactive
 * subscriber without ever losing an acquired key: the answer goes through a slot of the
 * subscription that the first of the answer and a cancellation takes. A claim cancelled
 * before it starts never reaches the store; one cancelled while it runs gives a key it
 * acquired back at once; only an answer that took the slot reaches the subscriber, which
 * then owns the lease (and if the subscriber cancels while the answer is parked in the
 * sink, the sink's discard gives it back). Shared by {@link InlineLockingStore} and
 * {@link OffloadedLockingStore}, which differ only in the thread a claim runs on.
 *
 * @author idempo
 */
final class ClaimHandoff {

	/** In the slot: the subscriber cancelled. */
	private static final Object CANCELLED = new Object();

	/** In the slot: the claim failed. */
	private static final Object FAILED = new Object();

	private final AtomicReference<@Nullable Object> slot = new AtomicReference<>();

	private final MonoSink<ClaimResult> sink;

	private final Consumer<Lease> giveBack;

	private ClaimHandoff(MonoSink<ClaimResult> sink, Consumer<Lease> giveBack) {
		this.sink = sink;
		this.giveBack = giveBack;
	}

	/**
	 * A claim whose answer is handed over through a slot.
	 * @param start starts the claim when subscribed: runs {@link #run} now or on another
	 * thread, or calls {@link #fail} if it cannot
	 * @param giveBack releases a lease that no subscriber will ever own
	 * @return the claim, never fused with its subscriber (whose discard hook fusion would
	 * bypass)
	 */
	static Mono<ClaimResult> claim(Consumer<ClaimHandoff> start, Consumer<Lease> giveBack) {
		return Mono.<ClaimResult>create((sink) -> {
			ClaimHandoff handoff = new ClaimHandoff(sink, giveBack);
			sink.onCancel(handoff::cancel);
			start.accept(handoff);
		}).doOnDiscard(ClaimResult.Acquired.class, (acquired) -> giveBack.accept(acquired.lease()));
	}

	/**
	 * Runs the claim unless the subscriber has cancelled, and hands its answer over if it
	 * takes the slot first; else gives an acquired key back.
	 * @param claim the blocking claim
	 */
	void run(Supplier<ClaimResult> claim) {
		if (this.slot.get() == CANCELLED) {
			return;
		}
		ClaimResult result;
		try {
			result = claim.get();
		}
		catch (Throwable ex) {
			fail(ex);
			return;
		}
		if (this.slot.compareAndSet(null, result)) {
			this.sink.success(result);
		}
		else {
			giveBackIfAcquired(result);
		}
	}

	/**
	 * Fails the claim, unless the subscriber has cancelled.
	 * @param ex why it failed
	 */
	void fail(Throwable ex) {
		if (this.slot.compareAndSet(null, FAILED)) {
			this.sink.error(ex);
		}
	}

	/**
	 * A cancel that comes after the answer took the slot but before the sink emitted it
	 * gives the lease back here, and the sink's discard may give it back again: harmless
	 * (a release checks the lease's owner token), and both are needed, since the sink may
	 * also drop the answer without discarding it.
	 */
	private void cancel() {
		giveBackIfAcquired(this.slot.getAndSet(CANCELLED));
	}

	private void giveBackIfAcquired(@Nullable Object answer) {
		if (answer instanceof ClaimResult.Acquired acquired) {
			this.giveBack.accept(acquired.lease());
		}
	}

	/**
	 * Releases a lease acquired for a subscriber that has gone, logging (never throwing)
	 * if the store fails.
	 * @param store the store
	 * @param lease the lease
	 * @param logger where a failure is logged
	 */
	static void releaseQuietly(LockingStore store, Lease lease, Log logger) {
		try {
			store.release(lease);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release an idempotency key claimed for a cancelled request; it stays locked"
					+ " until its lease ends", ex);
		}
	}

}
