package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.LockingStoreException;
import dev.idempo.store.jdbc.JdbcDialect.SessionInfo;

/**
 * The lock sessions of one store, and who runs them. A fixed number of dedicated database
 * sessions, opened on demand from the store's {@link DataSource} (never from the
 * application's pool) and kept open; every connection gets a new generation number, and
 * {@link #discard} closes one after freeing its locks by statement.
 * <h2>Combining</h2> Operations are not given a session each; they queue and are run in
 * batches. A complete or release queues on the session that holds its claim's lock; a
 * claim, which may run anywhere, queues in one queue shared by all sessions. A thread
 * that queued an operation then tries to take a session (its claim's session, or for a
 * claim any free one, open ones first). If it gets one, it runs batches there
 * ({@link SessionWork#runBatch}) until its own operation has been taken into one: each
 * batch holds the session's queued completes first, then its releases and unlocks, then
 * claims from the shared queue, all in one round trip; every operation's waiter gets its
 * outcome handed over and is woken. If it gets none, it parks: the thread that lets a
 * session go wakes the oldest waiting complete or release of that session, else the
 * oldest waiting claim ({@link #handOff}), which then takes the session. So one client
 * alone never waits for a thread hop, and under load one round trip and one durable
 * commit serve many requests. If a batch fails unexpectedly (a bug, an {@link Error}),
 * its operations are settled first; the thread that ran it then gets its own operation's
 * outcome, and an {@code Error} after that.
 * <p>
 * A waiter's deadline bounds only the wait before its operation starts: at the deadline
 * it cancels the operation if it is still queued (a compare-and-set, so no statement of
 * it was or will be sent), else it waits for the running batch, which the server's
 * statement timeout and the connection's network timeout bound. A complete or release
 * gets twice the timeout as its deadline, so that one batch of up to the timeout ahead of
 * it does not make it fail. Completes never wait behind claims: every batch takes all of
 * its session's queued completes (up to a size budget) before any claim.
 *
 * @author idempo
 */
final class LockSessionPool {

	private static final Log logger = LogFactory.getLog(LockSessionPool.class);

	/**
	 * The longest a waiter parks before it looks again by itself, in case a wake-up was
	 * missed.
	 */
	private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	private final DataSource dataSource;

	private final JdbcDialect dialect;

	private final JdbcStoreSettings settings;

	private final Executor networkTimeoutExecutor;

	private final List<LockSession> sessions;

	private final Queue<Operation> claims = new ConcurrentLinkedQueue<>();

	private final AtomicLong generations = new AtomicLong();

	private final SessionWork work;

	private final Consumer<LockSession> drainLater;

	private volatile boolean closed;

	/**
	 * Creates the pool.
	 * @param dataSource where lock sessions come from
	 * @param dialect the database's dialect
	 * @param settings the store settings
	 * @param networkTimeoutExecutor what drivers use to abort a connection that stopped
	 * answering
	 * @param work runs batches on a session
	 * @param drainLater has a maintenance task run a session's queued unlocks when no
	 * request is left to run them
	 */
	LockSessionPool(DataSource dataSource, JdbcDialect dialect, JdbcStoreSettings settings,
			Executor networkTimeoutExecutor, SessionWork work, Consumer<LockSession> drainLater) {
		this.dataSource = dataSource;
		this.dialect = dialect;
		this.settings = settings;
		this.networkTimeoutExecutor = networkTimeoutExecutor;
		this.work = work;
		this.drainLater = drainLater;
		List<LockSession> sessions = new ArrayList<>(settings.lockSessions());
		for (int i = 0; i < settings.lockSessions(); i++) {
			sessions.add(new LockSession(i));
		}
		this.sessions = List.copyOf(sessions);
	}

	List<LockSession> sessions() {
		return this.sessions;
	}

	LockSession get(int index) {
		return this.sessions.get(index);
	}

	/**
	 * The claims waiting for any session, oldest first; batches take them from here.
	 * @return the queue
	 */
	Queue<Operation> claims() {
		return this.claims;
	}

	boolean isClosed() {
		return this.closed;
	}

	/**
	 * Runs a claim on whichever session takes it first.
	 * @param claim the claim
	 * @param deadline the {@link System#nanoTime()} by which it must have started
	 * @return {@code true} once it has run, {@code false} if it was cancelled unstarted
	 * at the deadline
	 */
	boolean runClaim(Operation claim, long deadline) {
		this.claims.add(claim);
		return await(claim, null, deadline);
	}

	/**
	 * Runs a complete or release on the session that holds its claim's lock.
	 * @param session the session
	 * @param operation the operation
	 * @param deadline the {@link System#nanoTime()} by which it must have started
	 * @return {@code true} once it has run, {@code false} if it was cancelled unstarted
	 * at the deadline
	 */
	boolean runOn(LockSession session, Operation operation, long deadline) {
		queueOf(session, operation).add(operation);
		return await(operation, session, deadline);
	}

	private Queue<Operation> queueOf(@Nullable LockSession session, Operation operation) {
		if (session == null) {
			return this.claims;
		}
		return (operation.kind == Operation.Kind.COMPLETE) ? session.completes() : session.releases();
	}

	private boolean await(Operation operation, @Nullable LockSession target, long deadline) {
		boolean interrupted = false;
		try {
			while (!operation.isDone()) {
				if (operation.isQueued()) {
					LockSession session = (target != null) ? (target.tryRun() ? target : null) : tryRunAny();
					if (session != null) {
						Throwable failure = null;
						try {
							do {
								this.work.runBatch(session);
							}
							while (operation.isQueued());
						}
						catch (Throwable ex) {
							// a bug or a JVM failure; the batch's operations are settled
							failure = ex;
						}
						finally {
							session.endRun();
							handOff(session);
						}
						if (failure != null) {
							afterBatchFailure(operation, target, session, failure);
						}
						continue;
					}
					long remaining = deadline - System.nanoTime();
					if (remaining <= 0 || interrupted || this.closed) {
						if (operation.cancel()) {
							queueOf(target, operation).remove(operation);
							// pass on a wake-up meant for this thread
							wakeAny();
							return false;
						}
						continue;
					}
					LockSupport.parkNanos(this, Math.min(remaining, MAX_PARK_NANOS));
				}
				else {
					// running in a batch of another thread, which wakes this one when
					// done
					LockSupport.parkNanos(this, MAX_PARK_NANOS);
				}
				if (Thread.interrupted()) {
					interrupted = true;
				}
			}
			return true;
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Deals with an unexpected failure of a batch this thread ran (everything that batch
	 * took is settled by then). If this thread's own operation has ended, its caller gets
	 * its outcome, which may be a lock it must give back; if it never started, it is
	 * cancelled (so that no lock is ever taken for a caller that is gone) and the failure
	 * is what its caller gets; if another session's batch runs it, that batch is waited
	 * for. An {@link Error} is always passed on, after that.
	 */
	private void afterBatchFailure(Operation operation, @Nullable LockSession target, LockSession session,
			Throwable failure) {
		boolean cancelled = false;
		if (!operation.isDone() && operation.cancel()) {
			queueOf(target, operation).remove(operation);
			wakeAny();
			cancelled = true;
		}
		while (!cancelled && !operation.isDone()) {
			LockSupport.parkNanos(this, MAX_PARK_NANOS);
		}
		if (failure instanceof Error error) {
			throw error;
		}
		if (cancelled) {
			throw (failure instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException("A batch failed unexpectedly", failure);
		}
		logger.warn("A batch failed unexpectedly on idempotency " + session + "; its operations were settled", failure);
	}

	/**
	 * Takes a free session, open ones first (lowest first, so that a light load keeps to
	 * few connections), then one still to be opened.
	 */
	private @Nullable LockSession tryRunAny() {
		for (LockSession session : this.sessions) {
			if (session.isOpen() && session.tryRun()) {
				return session;
			}
		}
		for (LockSession session : this.sessions) {
			if (!session.isOpen() && session.tryRun()) {
				return session;
			}
		}
		return null;
	}

	/**
	 * Passes a session that was just let go on to whoever needs it: the oldest waiting
	 * complete or release of that session, else the oldest waiting claim; if only queued
	 * unlocks are left, a maintenance task runs them.
	 * @param session the session, no longer held by the caller
	 */
	void handOff(LockSession session) {
		Operation next = session.nextWaiting();
		if (next != null) {
			next.wake();
			return;
		}
		if (wakeClaim()) {
			return;
		}
		if (session.unlocks().isDrainDue() && !this.closed) {
			this.drainLater.accept(session);
		}
	}

	private boolean wakeClaim() {
		Operation claim;
		while ((claim = this.claims.peek()) != null) {
			if (claim.isQueued()) {
				claim.wake();
				return true;
			}
			this.claims.remove(claim);
		}
		return false;
	}

	private void wakeAny() {
		for (LockSession session : this.sessions) {
			if (!session.isRunning()) {
				Operation next = session.nextWaiting();
				if (next != null) {
					next.wake();
				}
			}
		}
		wakeClaim();
	}

	/**
	 * Opens the session's connection unless it is open. Requires the session's run lock.
	 * @param session the session
	 * @return whether a connection was opened
	 * @throws LockingStoreException if it cannot be opened
	 */
	boolean openIfNeeded(LockSession session) {
		if (session.isOpen()) {
			return false;
		}
		if (this.closed) {
			throw new LockingStoreException("The idempotency store is closed");
		}
		Connection connection = null;
		try {
			connection = this.dataSource.getConnection();
			connection.setAutoCommit(true);
			setNetworkTimeout(connection);
			SessionInfo info = this.dialect.openSession(connection, this.settings);
			session.open(connection, info, this.generations.incrementAndGet());
			return true;
		}
		catch (SQLException | RuntimeException ex) {
			if (connection != null) {
				try {
					connection.close();
				}
				catch (SQLException closeFailure) {
					ex.addSuppressed(closeFailure);
				}
			}
			throw (ex instanceof LockingStoreException storeException) ? storeException
					: new LockingStoreException("Could not open an idempotency lock session", ex);
		}
	}

	/**
	 * Gives a connection the network timeout, after which its driver gives it up as dead;
	 * it replaces any shorter socket timeout the connection was opened with.
	 * @param connection the connection
	 * @throws SQLException if the driver refuses
	 */
	void setNetworkTimeout(Connection connection) throws SQLException {
		try {
			connection.setNetworkTimeout(this.networkTimeoutExecutor, (int) this.settings.networkTimeout().toMillis());
		}
		catch (SQLFeatureNotSupportedException ex) {
			// the statement timeout still bounds every statement
		}
	}

	/**
	 * Frees the session's locks by statement (best effort: a pooled connection outlives
	 * {@code close()}, and with it its locks), then closes it. Requires the session's run
	 * lock.
	 * @param session the session
	 * @return the generation that was discarded
	 */
	long discard(LockSession session) {
		if (session.isOpen()) {
			Connection connection = session.connection();
			try {
				if (!connection.isClosed()) {
					SqlPipeline.run(connection, session.info().multiStatements(), this.settings.timeoutSeconds(),
							this.dialect.unlockAll());
				}
			}
			catch (SQLException | RuntimeException ex) {
				if (logger.isDebugEnabled()) {
					logger.debug("Could not free the locks of idempotency " + session + " before closing it", ex);
				}
			}
		}
		return session.discard();
	}

	/**
	 * Stops taking work: queued claims fail, queued completes and releases answer that
	 * their claim is lost; then every session that is let go within the timeout is
	 * discarded.
	 * @param lost what becomes of an operation whose claim is lost
	 * @param onDiscard called for each session discarded, while it is held
	 */
	void close(Consumer<Operation> lost, Consumer<LockSession> onDiscard) {
		this.closed = true;
		Operation operation;
		while ((operation = this.claims.poll()) != null) {
			if (operation.start()) {
				operation.fail(new LockingStoreException("The idempotency store is closed"));
			}
		}
		for (LockSession session : this.sessions) {
			for (Queue<Operation> queue : List.of(session.completes(), session.releases())) {
				while ((operation = queue.poll()) != null) {
					if (operation.start()) {
						lost.accept(operation);
					}
				}
			}
		}
		for (LockSession session : this.sessions) {
			try {
				if (session.tryRun(this.settings.timeout().toNanos())) {
					try {
						discard(session);
						onDiscard.accept(session);
					}
					finally {
						session.endRun();
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	/**
	 * Runs batches on a session held by the caller.
	 */
	interface SessionWork {

		/**
		 * Runs one batch of the session's queued work (and queued claims) in one round
		 * trip, and hands each operation taken its outcome; does nothing if nothing is
		 * queued.
		 * @param session the session, held by the caller
		 */
		void runBatch(LockSession session);

	}

}
