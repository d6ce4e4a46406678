package dev.idempo.store.jdbc;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.Lease;

import org.springframework.util.Assert;

/**
 * Lets one claim per storage key of this JVM into the database (session locks are
 * re-entrant), and owns each claim's life: a {@link Holder}'s one atomic {@link Phase}
 * changes only here ("One claim per key in this JVM" in {@code CONTRIBUTING.md}).
 *
 * @author idempo
 */
final class KeyGuard {

	private final ConcurrentHashMap<String, Holder> holders = new ConcurrentHashMap<>();

	/**
	 * Lets a new claim of {@code key} in, waiting until {@code deadline} at most while
	 * another claim's round trip is under way, and forgetting an owner whose session died
	 * (even one {@code FINISHING}).
	 * @return the new holder, {@code CLAIMING}, or {@code null} if the key is taken
	 */
	@Nullable Holder enter(String key, String token, long deadline, Predicate<Holder> isLive) {
		Holder mine = new Holder(key, token);
		while (true) {
			Holder current = this.holders.putIfAbsent(key, mine);
			if (current == null) {
				return mine;
			}
			if (!current.awaitSettled(deadline, isLive)) {
				return null;
			}
			State state = current.state();
			if (state == State.HELD || state == State.UNLOCKING || state == State.FINISHING) {
				if (isLive.test(current)) {
					return null;
				}
				// its session died: the claim is lost, the key is free
				forget(current);
			}
		}
	}

	@Nullable Holder get(String key) {
		return this.holders.get(key);
	}

	/** Records where a {@code CLAIMING} holder's lock is being taken. */
	void sent(Holder holder, int session, long generation, Object lock) {
		move(holder, (phase) -> (phase.state == State.CLAIMING) ? new Phase(State.CLAIMING, session, generation, lock)
				: phase);
	}

	void held(Holder holder) {
		Assert.state(holder.session() >= 0, "Claim holds no session");
		move(holder, (phase) -> phase.to(State.HELD));
	}

	/** The holder of {@code lease}, now {@code FINISHING}, if it was {@code HELD}. */
	@Nullable Holder finishing(Lease lease) {
		Holder holder = this.holders.get(lease.key());
		if (holder == null || !holder.token.equals(lease.token())) {
			return null;
		}
		Phase before = holder.phase
			.getAndUpdate((phase) -> (phase.state == State.HELD) ? phase.to(State.FINISHING) : phase);
		return (before.state == State.HELD) ? holder : null;
	}

	/** The lock may still be held and its unlock is queued: the key stays taken. */
	void unlocking(Holder holder) {
		move(holder, (phase) -> phase.to(State.UNLOCKING));
	}

	/** Frees the key in this JVM, for good. */
	void forget(Holder holder) {
		this.holders.remove(holder.key, holder);
		move(holder, (phase) -> phase.to(State.GONE));
	}

	/** The one place where a holder's phase changes; {@code GONE} is final. */
	private static void move(Holder holder, UnaryOperator<Phase> change) {
		holder.phase.updateAndGet((phase) -> (phase.state == State.GONE) ? phase : change.apply(phase));
		holder.signal();
	}

	long heldOn(int session, long generation) {
		return this.holders.values()
			.stream()
			.filter((holder) -> holder.state() == State.HELD && holder.isOn(session, generation))
			.count();
	}

	/** Whether another claim has the same lock on the connection (colliding ids). */
	boolean sharesLock(Holder mine) {
		Phase phase = mine.phase.get();
		if (phase.session < 0 || phase.lock == null) {
			return false;
		}
		return this.holders.values()
			.stream()
			.anyMatch((holder) -> holder != mine && holder.isOn(phase.session, phase.generation)
					&& phase.lock.equals(holder.lock()) && holder.state() != State.GONE);
	}

	/** A claim's life. */
	enum State {

		CLAIMING, HELD, FINISHING, UNLOCKING, GONE

	}

	/** A claim's state and where its lock lives once sent (-1, 0, null before). */
	record Phase(State state, int session, long generation, @Nullable Object lock) {

		Phase to(State next) {
			return new Phase(next, this.session, this.generation, this.lock);
		}

	}

	/** The guard's entry for one key: the claim of this JVM that owns it. */
	static final class Holder {

		/** How often a waiter looks whether a finishing holder's session died. */
		static final long STALE_CHECK_MILLIS = 100;

		final String key;

		final String token;

		private final AtomicReference<Phase> phase = new AtomicReference<>(new Phase(State.CLAIMING, -1, 0, null));

		/** Waits for phase changes; a monitor would pin virtual threads (JDK 21-23). */
		private final ReentrantLock mutex = new ReentrantLock();

		private final Condition changed = this.mutex.newCondition();

		Holder(String key, String token) {
			this.key = key;
			this.token = token;
		}

		State state() {
			return this.phase.get().state;
		}

		int session() {
			return this.phase.get().session;
		}

		long generation() {
			return this.phase.get().generation;
		}

		@Nullable Object lock() {
			return this.phase.get().lock;
		}

		boolean isOn(int session, long generation) {
			Phase phase = this.phase.get();
			return phase.session == session && phase.generation == generation;
		}

		private void signal() {
			this.mutex.lock();
			try {
				this.changed.signalAll();
			}
			finally {
				this.mutex.unlock();
			}
		}

		/**
		 * Waits while the claim or its completion is in flight, not for a completion
		 * whose session died (a dying session wakes no holder); {@code false} at the
		 * deadline.
		 */
		boolean awaitSettled(long deadline, Predicate<Holder> isLive) {
			this.mutex.lock();
			try {
				State state;
				while ((state = state()) == State.CLAIMING || state == State.FINISHING) {
					if (state == State.FINISHING && !isLive.test(this)) {
						return true;
					}
					long millis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
					if (millis <= 0) {
						return false;
					}
					try {
						this.changed.await(Math.min(millis, STALE_CHECK_MILLIS), TimeUnit.MILLISECONDS);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						return false;
					}
				}
				return true;
			}
			finally {
				this.mutex.unlock();
			}
		}

	}

}
