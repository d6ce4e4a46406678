package dev.idempo.store.jdbc;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.Lease;

import org.springframework.util.Assert;

/**
 * The in-JVM guard of a {@link JdbcLockingStore}: which claim of this JVM owns each
 * storage key, and where its lock lives. Session-level database locks are re-entrant, so
 * two requests of one JVM that claim one key through the same lock session would both get
 * it; the guard lets only one claim per key into the database at a time.
 * <p>
 * Each {@link Holder} goes through {@code CLAIMING -> HELD -> FINISHING -> GONE}, or from
 * {@code FINISHING} (or a failed claim) to {@code UNLOCKING} while its unlock waits in
 * its session's {@link UnlockQueue}. A holder leaves the map when it is {@code GONE}; a
 * claim of the same key meanwhile waits while the holder is {@code CLAIMING} or
 * {@code FINISHING} (a round trip is under way) and is answered "in progress" while it is
 * {@code HELD} or {@code UNLOCKING}. A holder whose session's connection is gone (its
 * lock with it) is forgotten by the next claim of its key, whatever its state after
 * {@code CLAIMING}.
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
			if (current.isLocked() || current.isFinishing()) {
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
	 * Starts finishing (completing or releasing) the claim of {@code lease}, if it still
	 * owns its key and holds its lock.
	 * @param lease the lease
	 * @return the holder, now {@code FINISHING}, or {@code null}
	 */
	@Nullable Holder finishing(Lease lease) {
		Holder holder = this.holders.get(lease.key());
		if (holder == null || !holder.token.equals(lease.token()) || !holder.finish()) {
			return null;
		}
		return holder;
	}

	/**
	 * Removes {@code holder}: its key is free in this JVM.
	 * @param holder the holder
	 */
	void forget(Holder holder) {
		this.holders.remove(holder.key, holder);
		holder.gone();
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
			.filter((holder) -> holder.isHeld() && holder.isOn(session, generation))
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
		int session = mine.session();
		Object lock = mine.lock();
		if (session < 0 || lock == null) {
			return false;
		}
		long generation = mine.generation();
		return this.holders.values()
			.stream()
			.anyMatch((holder) -> holder != mine && holder.isOn(session, generation) && lock.equals(holder.lock())
					&& !holder.isGone());
	}

	private enum State {

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
	 * The guard's entry for one key: which claim of this JVM owns it, and on which
	 * session and connection generation its lock lives.
	 */
	static final class Holder {

		/** How often a waiter looks whether a finishing holder's session died. */
		static final long STALE_CHECK_MILLIS = 100;

		final String key;

		final String token;

		/**
		 * Guards the state; a lock rather than a monitor, so that a virtual thread that
		 * waits for a claim to settle does not pin its carrier (JDK 21 to 23).
		 */
		private final ReentrantLock mutex = new ReentrantLock();

		private final Condition changed = this.mutex.newCondition();

		private State state = State.CLAIMING;

		/** The index of the lock session the lock is taken on, -1 until it is sent. */
		private int session = -1;

		private long generation;

		private @Nullable Object lock;

		Holder(String key, String token) {
			this.key = key;
			this.token = token;
		}

		/** The index of the lock session of the claim's lock, -1 until it was sent. */
		int session() {
			this.mutex.lock();
			try {
				return this.session;
			}
			finally {
				this.mutex.unlock();
			}
		}

		long generation() {
			this.mutex.lock();
			try {
				return this.generation;
			}
			finally {
				this.mutex.unlock();
			}
		}

		/** The database lock, once the claim was sent to a session. */
		@Nullable Object lock() {
			this.mutex.lock();
			try {
				return this.lock;
			}
			finally {
				this.mutex.unlock();
			}
		}

		boolean isOn(int session, long generation) {
			this.mutex.lock();
			try {
				return this.session == session && this.generation == generation;
			}
			finally {
				this.mutex.unlock();
			}
		}

		boolean isGone() {
			this.mutex.lock();
			try {
				return this.state == State.GONE;
			}
			finally {
				this.mutex.unlock();
			}
		}

		boolean isHeld() {
			this.mutex.lock();
			try {
				return this.state == State.HELD;
			}
			finally {
				this.mutex.unlock();
			}
		}

		/** Whether the lock is, or may still be, held on its session. */
		boolean isLocked() {
			this.mutex.lock();
			try {
				return this.state == State.HELD || this.state == State.UNLOCKING;
			}
			finally {
				this.mutex.unlock();
			}
		}

		boolean isFinishing() {
			this.mutex.lock();
			try {
				return this.state == State.FINISHING;
			}
			finally {
				this.mutex.unlock();
			}
		}

		boolean isUnlocking() {
			this.mutex.lock();
			try {
				return this.state == State.UNLOCKING;
			}
			finally {
				this.mutex.unlock();
			}
		}

		/**
		 * Records where the claim's lock is being taken; the claim is still
		 * {@code CLAIMING}.
		 */
		void attach(int session, long generation, Object lock) {
			this.mutex.lock();
			try {
				this.session = session;
				this.generation = generation;
				this.lock = lock;
			}
			finally {
				this.mutex.unlock();
			}
		}

		/** The claim took its lock, on the session it is attached to. */
		void hold() {
			this.mutex.lock();
			try {
				Assert.state(this.session >= 0, "Claim holds no session");
				this.state = State.HELD;
				this.changed.signalAll();
			}
			finally {
				this.mutex.unlock();
			}
		}

		boolean finish() {
			this.mutex.lock();
			try {
				if (this.state != State.HELD) {
					return false;
				}
				this.state = State.FINISHING;
				return true;
			}
			finally {
				this.mutex.unlock();
			}
		}

		void unlocking() {
			this.mutex.lock();
			try {
				this.state = State.UNLOCKING;
				this.changed.signalAll();
			}
			finally {
				this.mutex.unlock();
			}
		}

		void gone() {
			this.mutex.lock();
			try {
				this.state = State.GONE;
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
				while (this.state == State.CLAIMING || this.state == State.FINISHING) {
					if (this.state == State.FINISHING && !isLive.test(this)) {
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
