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
 * Owns the life of every claim of this JVM: which claim owns each storage key, where its
 * lock lives, and what it is doing. Session-level database locks are re-entrant, so two
 * requests of one JVM that claim one key through the same lock session would both get it;
 * the guard lets only one claim per key into the database at a time.
 * <p>
 * A {@link Holder} is immutable but for one atomic {@link Phase}, and only the guard's
 * transition methods change it: {@link #enter} ({@code CLAIMING}), {@link #sent} (where
 * the lock is being taken), {@link #held} ({@code HELD}), {@link #finishing}
 * ({@code FINISHING}), {@link #unlocking} ({@code UNLOCKING}: its unlock waits in its
 * session's {@link UnlockQueue}) and {@link #forget} ({@code GONE}, for good). A claim of
 * the same key meanwhile waits while the holder is {@code CLAIMING} or {@code FINISHING}
 * (a round trip is under way) and is answered "in progress" while it is {@code HELD} or
 * {@code UNLOCKING}. A holder whose session's connection is gone (its lock with it) is
 * forgotten by the next claim of its key, whatever its state after {@code CLAIMING}.
 *
 * @author idempo
 */
final class KeyGuard {

	private final ConcurrentHashMap<String, Holder> holders = new ConcurrentHashMap<>();

	/**
	 * Lets a new claim of {@code key} in, unless another claim of this JVM owns the key.
	 * Waits, until {@code deadline} at most, while the other claim's round trip is under
	 * way; forgets an owner whose lock died with its session (also one still
	 * {@code FINISHING}: a complete or release whose session died can no longer hold the
	 * key, whatever became of its round trip).
	 * @param key the storage key
	 * @param token the new claim's owner token
	 * @param deadline the {@link System#nanoTime()} to give up at
	 * @param isLive whether a holder's lock session is still the connection that took its
	 * lock
	 * @return the new holder, in state {@code CLAIMING}, or {@code null} if the key is
	 * taken
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

	/**
	 * The holder that owns {@code key}, if any.
	 * @param key the storage key
	 * @return the holder
	 */
	@Nullable Holder get(String key) {
		return this.holders.get(key);
	}

	/**
	 * The claim is being sent to a session: records where its lock is being taken; it is
	 * still {@code CLAIMING}.
	 * @param holder the holder
	 * @param session the lock session's index
	 * @param generation the session connection's generation
	 * @param lock the database lock
	 */
	void sent(Holder holder, int session, long generation, Object lock) {
		move(holder, (phase) -> (phase.state == State.CLAIMING) ? new Phase(State.CLAIMING, session, generation, lock)
				: phase);
	}

	/**
	 * The claim took its lock, on the session it was sent to.
	 * @param holder the holder
	 */
	void held(Holder holder) {
		Assert.state(holder.session() >= 0, "Claim holds no session");
		move(holder, (phase) -> phase.to(State.HELD));
	}

	/**
	 * Starts finishing (completing or releasing) the claim of {@code lease}, if it still
	 * owns its key and holds its lock.
	 * @param lease the lease
	 * @return the holder, now {@code FINISHING}, or {@code null}
	 */
	@Nullable Holder finishing(Lease lease) {
		Holder holder = this.holders.get(lease.key());
		if (holder == null || !holder.token.equals(lease.token())) {
			return null;
		}
		Phase before = holder.phase
			.getAndUpdate((phase) -> (phase.state == State.HELD) ? phase.to(State.FINISHING) : phase);
		return (before.state == State.HELD) ? holder : null;
	}

	/**
	 * The claim's lock may still be held, and its unlock is queued on its session: the
	 * key stays taken until that has run.
	 * @param holder the holder
	 */
	void unlocking(Holder holder) {
		move(holder, (phase) -> phase.to(State.UNLOCKING));
	}

	/**
	 * Removes {@code holder}: its key is free in this JVM, for good.
	 * @param holder the holder
	 */
	void forget(Holder holder) {
		this.holders.remove(holder.key, holder);
		move(holder, (phase) -> phase.to(State.GONE));
	}

	/** The one place where a holder's phase changes; {@code GONE} is final. */
	private static void move(Holder holder, UnaryOperator<Phase> change) {
		holder.phase.updateAndGet((phase) -> (phase.state == State.GONE) ? phase : change.apply(phase));
		holder.signal();
	}

	/**
	 * Counts the claims held on one connection of a session.
	 * @param session the lock session's index
	 * @param generation the connection's generation
	 * @return how many holders hold a lock there
	 */
	long heldOn(int session, long generation) {
		return this.holders.values()
			.stream()
			.filter((holder) -> holder.state() == State.HELD && holder.isOn(session, generation))
			.count();
	}

	/**
	 * Whether a claim of this JVM other than {@code mine} has, or is taking, on the same
	 * connection, the same database lock (as colliding PostgreSQL lock ids can); then the
	 * session's lock counts cannot be told apart.
	 * @param mine the holder, attached to its session
	 * @return whether such a claim exists
	 */
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

		/** The claim round trip is running. */
		CLAIMING,

		/** The lock is held on a session. */
		HELD,

		/** Complete or release is running. */
		FINISHING,

		/**
		 * The lock may still be held; its unlock is queued on its session, and the key
		 * stays taken until it has run.
		 */
		UNLOCKING,

		/** Gone from the guard. */
		GONE

	}

	/**
	 * Where a claim is in its life, and where its lock lives once it was sent.
	 *
	 * @param state the state
	 * @param session the index of the lock session, -1 until the claim was sent
	 * @param generation the generation of that session's connection, 0 until sent
	 * @param lock the database lock, {@code null} until sent
	 */
	record Phase(State state, int session, long generation, @Nullable Object lock) {

		Phase to(State next) {
			return new Phase(next, this.session, this.generation, this.lock);
		}

	}

	/**
	 * The guard's entry for one key: which claim of this JVM owns it, and its
	 * {@link Phase}, which only the guard changes.
	 */
	static final class Holder {

		/** How often a waiter looks whether a finishing holder's session died. */
		static final long STALE_CHECK_MILLIS = 100;

		final String key;

		final String token;

		private final AtomicReference<Phase> phase = new AtomicReference<>(new Phase(State.CLAIMING, -1, 0, null));

		/**
		 * Only for waiting until a phase changes; a lock rather than a monitor, so that a
		 * virtual thread that waits for a claim to settle does not pin its carrier (JDK
		 * 21 to 23).
		 */
		private final ReentrantLock mutex = new ReentrantLock();

		private final Condition changed = this.mutex.newCondition();

		Holder(String key, String token) {
			this.key = key;
			this.token = token;
		}

		State state() {
			return this.phase.get().state;
		}

		/** The index of the lock session of the claim's lock, -1 until it was sent. */
		int session() {
			return this.phase.get().session;
		}

		long generation() {
			return this.phase.get().generation;
		}

		/** The database lock, once the claim was sent to a session. */
		@Nullable Object lock() {
			return this.phase.get().lock;
		}

		boolean isOn(int session, long generation) {
			Phase phase = this.phase.get();
			return phase.session == session && phase.generation == generation;
		}

		boolean isGone() {
			return state() == State.GONE;
		}

		boolean isClaiming() {
			return state() == State.CLAIMING;
		}

		boolean isHeld() {
			return state() == State.HELD;
		}

		boolean isUnlocking() {
			return state() == State.UNLOCKING;
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
		 * Waits while the claim or its completion is in flight, but not for a completion
		 * whose session died (looked at every {@value #STALE_CHECK_MILLIS} ms: a session
		 * that dies does not wake its holders).
		 * @param deadline the {@link System#nanoTime()} to give up at
		 * @param isLive whether a holder's lock session is still the connection that took
		 * its lock
		 * @return {@code false} if it still was at the deadline
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
