package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransactionRollbackException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;

import org.springframework.util.Assert;

/**
 * What the PostgreSQL and MySQL/MariaDB stores share: claims are session-level locks
 * ({@code pg_try_advisory_lock}, {@code GET_LOCK}) held on a few dedicated lock sessions
 * with an in-JVM guard, completed responses are rows. The design, the connection
 * discipline and the failure semantics are described in the
 * {@linkplain dev.idempo.store.jdbc package documentation}.
 *
 * @param <S> what the store keeps about each lock session's connection
 * @author idempo
 */
abstract class AbstractJdbcLockingStore<S> implements LockingStore, AutoCloseable {

	private static final Log logger = LogFactory.getLog(AbstractJdbcLockingStore.class);

	private static final int MAX_KEY_LENGTH = 128;

	private static final int MAX_CLEANUP_BATCHES = 1000;

	/**
	 * Failed pings in a row after which a connection that is still open counts as dead.
	 */
	private static final int MAX_FAILED_PINGS = 3;

	/** Queued unlocks that may fail in a row on a live session before it is ended. */
	private static final int MAX_FAILED_UNLOCKS = 3;

	private final DataSource dataSource;

	private final JdbcStoreSettings settings;

	private final List<LockSession<S, Holder>> sessions;

	private final AtomicInteger nextSession = new AtomicInteger();

	private final AtomicLong generations = new AtomicLong();

	private final ConcurrentHashMap<String, Holder> holders = new ConcurrentHashMap<>();

	private final ScheduledThreadPoolExecutor maintenance;

	/** Signalled whenever a lock session is let go while someone waits for any. */
	private final Object sessionFreed = new Object();

	private final AtomicLong freedSessions = new AtomicLong();

	private final AtomicInteger waitingForSession = new AtomicInteger();

	private volatile boolean closed;

	AbstractJdbcLockingStore(DataSource dataSource, JdbcStoreSettings settings) {
		Assert.notNull(dataSource, "'dataSource' must not be null");
		Assert.notNull(settings, "'settings' must not be null");
		this.dataSource = dataSource;
		this.settings = settings;
		List<LockSession<S, Holder>> sessions = new ArrayList<>(settings.lockSessions());
		for (int i = 0; i < settings.lockSessions(); i++) {
			sessions.add(new LockSession<>(i, this::sessionFreed));
		}
		this.sessions = List.copyOf(sessions);
		// two threads, so that a long cleanup never delays the session checks
		this.maintenance = new ScheduledThreadPoolExecutor(2, (runnable) -> {
			Thread thread = new Thread(runnable, "idempo-jdbc-store");
			thread.setDaemon(true);
			return thread;
		});
		this.maintenance.setRemoveOnCancelPolicy(true);
	}

	/**
	 * Starts the maintenance tasks; called once by each subclass at the end of its
	 * constructor, so that the tasks never see a half-built store.
	 */
	final void start() {
		long check = this.settings.sessionCheckInterval().toMillis();
		long cleanup = this.settings.cleanupInterval().toMillis();
		this.maintenance.scheduleWithFixedDelay(this::checkSessions, check, check, TimeUnit.MILLISECONDS);
		this.maintenance.scheduleWithFixedDelay(this::cleanUp, cleanup, cleanup, TimeUnit.MILLISECONDS);
	}

	// ---- what each database does differently

	/**
	 * Prepares a freshly opened lock session connection (already in auto-commit mode) and
	 * says what the store needs to know about it.
	 */
	abstract S openSession(Connection connection) throws SQLException;

	/**
	 * In one round trip: takes the lock of {@code key} unless an unexpired record exists,
	 * then reads the unexpired record with a view taken after the lock attempt (so that a
	 * record committed just before its owner unlocked is seen).
	 */
	abstract Probe probe(Connection connection, S session, String key) throws SQLException;

	/**
	 * In one round trip: stores the record (upsert, {@code expires_at} computed by the
	 * server) and commits it, only if this session still holds the lock of {@code key},
	 * then unlocks.
	 * @return whether the record was stored
	 */
	abstract boolean storeAndUnlock(Connection connection, S session, String key, StoredRecord record, Duration ttl)
			throws SQLException;

	/**
	 * Undoes what a failed {@link #storeAndUnlock} may have left on a live connection,
	 * such as an aborted transaction. The lock is still held afterwards.
	 */
	void afterFailedStore(Connection connection) throws SQLException {
	}

	/**
	 * Unlocks {@code key} on this session.
	 * @return whether this session held the lock
	 */
	abstract boolean unlock(Connection connection, S session, String key) throws SQLException;

	/**
	 * Frees every lock this session holds, by statement: run before a lock session's
	 * connection is closed, because closing frees them only if the connection is a
	 * database session of its own (a pooled connection outlives {@code close()}).
	 */
	abstract void unlockAll(Connection connection) throws SQLException;

	/**
	 * Deletes at most {@code limit} expired rows.
	 * @return the number of rows deleted
	 */
	abstract int deleteExpired(Connection connection, int limit) throws SQLException;

	/**
	 * Checks the unlock that followed a store: a stored record means this session held
	 * the lock, so the unlock must have found it.
	 */
	static void checkUnlocked(boolean stored, boolean unlocked) {
		if (stored && !unlocked) {
			logger.warn("An idempotency lock was not held by its lock session when its response was stored");
		}
	}

	final JdbcStoreSettings settings() {
		return this.settings;
	}

	// ---- LockingStore

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs one statement round trip on a free lock session (rarely two: see
	 * {@link #probe}), waiting up to {@link JdbcStoreSettings#timeout()} for any session
	 * to be free. A duplicate of a request of this JVM that is itself being claimed or
	 * completed waits for that round trip instead of answering "in progress" early.
	 * {@code lockTtl} is ignored: the lock lives as long as its session.
	 */
	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		checkKey(key);
		if (this.closed) {
			throw new LockingStoreException("The idempotency store is closed");
		}
		long deadline = System.nanoTime() + this.settings.timeout().toNanos();
		Holder mine = new Holder(key, UUID.randomUUID().toString());
		while (true) {
			Holder current = this.holders.putIfAbsent(key, mine);
			if (current == null) {
				break;
			}
			if (!current.awaitSettled(deadline)) {
				return ClaimResult.InProgress.instance();
			}
			if (current.isLocked()) {
				if (isLive(current)) {
					return ClaimResult.InProgress.instance();
				}
				// its session died: the claim is lost, the key is free
				forget(current);
			}
		}
		ClaimResult result = null;
		try {
			result = claimOnSession(key, mine, deadline);
			return result;
		}
		finally {
			if (!(result instanceof ClaimResult.Acquired) && !mine.isUnlocking()) {
				forget(mine);
			}
		}
	}

	private ClaimResult claimOnSession(String key, Holder mine, long deadline) {
		boolean retried = false;
		while (true) {
			LockSession<S, Holder> session = lockAnySession(deadline);
			try {
				runPendingUnlocks(session);
				boolean opened = openIfNeeded(session);
				Probe probe;
				try {
					probe = probe(session.connection(), session.state(), key);
				}
				catch (SQLException ex) {
					if (session.isDead(ex)) {
						lost(session, "failed while claiming a key", ex);
						if (!opened && !retried) {
							// a connection that died while idle: once more on a new one
							retried = true;
							continue;
						}
						throw new LockingStoreException("Idempotency lock session failed", ex);
					}
					// the statement may have taken the lock before it failed
					freeLockOfFailedClaim(session, mine, ex);
					throw new LockingStoreException("Could not claim an idempotency key", ex);
				}
				catch (RuntimeException ex) {
					// a driver failing in an unexpected way: the lock may be held all the
					// same
					SQLException failure = new SQLException("Unexpected failure while claiming", ex);
					freeLockOfFailedClaim(session, mine, failure);
					throw new LockingStoreException("Could not claim an idempotency key", ex);
				}
				StoredRecord record = probe.record();
				if (record != null) {
					if (probe.locked()) {
						// the owner completed between our two statements: give back the
						// lock this statement took
						unlockOrDefer(session, mine, null);
					}
					return new ClaimResult.Completed(record);
				}
				if (probe.locked()) {
					mine.hold(session, session.generation());
					return new ClaimResult.Acquired(new Lease(key, mine.token));
				}
				return ClaimResult.InProgress.instance();
			}
			finally {
				session.unlock();
			}
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs on the lease's lock session. Answers {@code false} if that session died since
	 * the claim; then nothing was stored by this call. If the response cannot be stored
	 * (the session stayed busy for {@link JdbcStoreSettings#timeout()}, or the statement
	 * failed on a live session) this throws, and the key stays locked until its unlock
	 * has run on that session: right away where possible, else before the session's next
	 * statement.
	 */
	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		Assert.isTrue(!ttl.isNegative() && !ttl.isZero(), "'ttl' must be positive");
		Holder holder = finishing(lease);
		if (holder == null) {
			return false;
		}
		// until known otherwise, the lock may still be held: keep the key and unlock
		// later
		boolean over = false;
		try {
			if (!isLive(holder)) {
				over = true;
				return false;
			}
			LockSession<S, Holder> session = sessionOf(holder);
			lockSession(session, System.nanoTime() + this.settings.timeout().toNanos());
			try {
				runPendingUnlocks(session);
				if (session.generation() != holder.generation()) {
					over = true;
					return false;
				}
				try {
					boolean stored = storeAndUnlock(session.connection(), session.state(), lease.key(), record, ttl);
					over = true;
					return stored;
				}
				catch (SQLException ex) {
					if (session.isDead(ex)) {
						lost(session, "failed while storing a response", ex);
						over = true;
						return false;
					}
					over = undoFailedStore(session, holder, ex);
					throw new LockingStoreException("Could not store an idempotent response", ex);
				}
			}
			finally {
				session.unlock();
			}
		}
		finally {
			settle(holder, over);
		}
	}

	/**
	 * Rolls back what a failed store left on a live session and unlocks the key.
	 * @return whether the key is unlocked (or its session gone)
	 */
	private boolean undoFailedStore(LockSession<S, Holder> session, Holder holder, SQLException failure) {
		try {
			afterFailedStore(session.connection());
			unlock(session.connection(), session.state(), holder.key);
			return true;
		}
		catch (SQLException ex) {
			failure.addSuppressed(ex);
			if (session.isDead(ex)) {
				lost(session, "failed while recovering from a failed store", failure);
				return true;
			}
			return false;
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs on the lease's lock session. If that session stays busy for
	 * {@link JdbcStoreSettings#timeout()}, the unlock is queued on it and runs before the
	 * session's next statement (the key stays locked until then), and this answers
	 * {@code true}. If the unlock statement fails on a live session, it is queued the
	 * same way and this throws; the session, and the other claims on it, are kept.
	 */
	@Override
	public boolean release(Lease lease) {
		Holder holder = finishing(lease);
		if (holder == null) {
			return false;
		}
		boolean over = false;
		try {
			if (!isLive(holder)) {
				over = true;
				return false;
			}
			LockSession<S, Holder> session = sessionOf(holder);
			if (!tryLockSession(session, System.nanoTime() + this.settings.timeout().toNanos())) {
				// queued by settle: runs before the session's next statement
				return true;
			}
			try {
				runPendingUnlocks(session);
				if (session.generation() != holder.generation()) {
					over = true;
					return false;
				}
				try {
					boolean released = unlock(session.connection(), session.state(), lease.key());
					over = true;
					if (!released) {
						logger.warn("An idempotency lock was not held by its lock session when released");
					}
					return released;
				}
				catch (SQLException ex) {
					if (session.isDead(ex)) {
						lost(session, "failed while releasing a key", ex);
						over = true;
						return false;
					}
					throw new LockingStoreException("Could not release an idempotency lock; the unlock is retried "
							+ "before the next statement of its lock session", ex);
				}
			}
			finally {
				session.unlock();
			}
		}
		finally {
			settle(holder, over);
		}
	}

	/**
	 * Reports whether {@code lease} still holds its key, without a round trip: locks do
	 * not expire, they are lost only with their session.
	 * @param lease the lease
	 * @param lockTtl ignored
	 * @return whether the lease's session is still the one that took the lock
	 */
	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		Holder holder = this.holders.get(lease.key());
		return holder != null && holder.token.equals(lease.token()) && holder.isHeld() && isLive(holder);
	}

	/**
	 * Deletes expired records now, in batches of
	 * {@link JdbcStoreSettings#cleanupBatchSize()} rows until a batch comes back short;
	 * the maintenance thread calls this every
	 * {@link JdbcStoreSettings#cleanupInterval()}. Runs on a short-lived connection of
	 * its own, never on a lock session, in {@code READ COMMITTED} (no gap locks that
	 * could deadlock with a concurrent store); a batch that is chosen as a deadlock
	 * victim is retried once.
	 * @return the number of rows deleted
	 * @throws LockingStoreException if the database cannot be reached
	 */
	public int deleteExpiredRecords() {
		int total = 0;
		try (Connection connection = this.dataSource.getConnection()) {
			connection.setAutoCommit(true);
			setNetworkTimeout(connection);
			connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
			for (int batch = 0; batch < MAX_CLEANUP_BATCHES && !this.closed; batch++) {
				int deleted = deleteExpiredRetryingDeadlock(connection);
				total += deleted;
				if (deleted < this.settings.cleanupBatchSize()) {
					break;
				}
			}
			return total;
		}
		catch (SQLException ex) {
			throw new LockingStoreException("Could not delete expired idempotency records", ex);
		}
	}

	private int deleteExpiredRetryingDeadlock(Connection connection) throws SQLException {
		try {
			return deleteExpired(connection, this.settings.cleanupBatchSize());
		}
		catch (SQLException ex) {
			if (!isDeadlock(ex)) {
				throw ex;
			}
			logger.debug("Expired idempotency records: the delete was a deadlock victim; retrying once", ex);
			try {
				return deleteExpired(connection, this.settings.cleanupBatchSize());
			}
			catch (SQLException again) {
				again.addSuppressed(ex);
				throw again;
			}
		}
	}

	static boolean isDeadlock(SQLException ex) {
		String state = ex.getSQLState();
		// 40001: MySQL/MariaDB deadlock (error 1213); 40P01: PostgreSQL deadlock
		return ex instanceof SQLTransactionRollbackException || "40001".equals(state) || "40P01".equals(state)
				|| ex.getErrorCode() == 1213;
	}

	/**
	 * Stops the maintenance thread and closes the lock sessions, after freeing their
	 * locks by statement; claims still held are lost.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.maintenance.shutdownNow();
		for (LockSession<S, Holder> session : this.sessions) {
			try {
				if (session.tryLock(this.settings.timeout().toNanos())) {
					try {
						discard(session);
					}
					finally {
						session.unlock();
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	// ---- sessions

	/**
	 * Takes whichever lock session is free first, waiting up to {@code deadline}.
	 */
	private LockSession<S, Holder> lockAnySession(long deadline) {
		int count = this.sessions.size();
		this.waitingForSession.incrementAndGet();
		try {
			while (true) {
				long freed = this.freedSessions.get();
				int first = Math.floorMod(this.nextSession.getAndIncrement(), count);
				// first pass: leave sessions that a complete or release waits for to
				// them,
				// so that new claims never starve the requests that are finishing
				for (int pass = 0; pass < 2; pass++) {
					for (int i = 0; i < count; i++) {
						LockSession<S, Holder> session = this.sessions.get((first + i) % count);
						if ((pass == 1 || !session.hasWaiters()) && session.tryLock()) {
							return session;
						}
					}
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					throw busy();
				}
				synchronized (this.sessionFreed) {
					if (this.freedSessions.get() == freed) {
						try {
							TimeUnit.NANOSECONDS.timedWait(this.sessionFreed, remaining);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
							throw busy();
						}
					}
				}
			}
		}
		finally {
			this.waitingForSession.decrementAndGet();
		}
	}

	private void sessionFreed() {
		if (this.waitingForSession.get() > 0) {
			synchronized (this.sessionFreed) {
				this.freedSessions.incrementAndGet();
				this.sessionFreed.notifyAll();
			}
		}
	}

	private void lockSession(LockSession<S, Holder> session, long deadline) {
		if (!tryLockSession(session, deadline)) {
			throw busy();
		}
	}

	private boolean tryLockSession(LockSession<S, Holder> session, long deadline) {
		try {
			return session.tryLock(Math.max(0, deadline - System.nanoTime()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private SessionBusyException busy() {
		return new SessionBusyException("No idempotency lock session was free within " + this.settings.timeout()
				+ " (idempo.store.jdbc.timeout); consider more lock sessions (idempo.store.jdbc.lock-sessions)");
	}

	private boolean openIfNeeded(LockSession<S, Holder> session) {
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
			S state = openSession(connection);
			session.open(connection, state, this.generations.incrementAndGet());
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
	 */
	private void setNetworkTimeout(Connection connection) throws SQLException {
		try {
			connection.setNetworkTimeout(this.maintenance, (int) this.settings.networkTimeout().toMillis());
		}
		catch (SQLFeatureNotSupportedException ex) {
			// the statement timeout still bounds every statement
		}
	}

	/**
	 * Frees the lock a failed claim statement may have taken. Unlocking a lock the
	 * statement did not take is harmless unless another claim of this JVM holds the same
	 * lock on this session (another key whose lock collides with this one, as 32-bit
	 * PostgreSQL lock ids can): then unlocking could free that claim's lock instead, and
	 * the session is closed, which is sure to free everything it held.
	 */
	private void freeLockOfFailedClaim(LockSession<S, Holder> session, Holder mine, SQLException failure) {
		long generation = session.generation();
		boolean shared = this.holders.values()
			.stream()
			.anyMatch((holder) -> holder != mine && holder.isLocked() && holder.sessionOrNull() == session
					&& holder.generation() == generation && sameLock(holder.key, mine.key));
		if (shared) {
			lost(session, "closed to free a lock of a failed claim", failure);
			return;
		}
		unlockOrDefer(session, mine, failure);
	}

	/**
	 * Whether two keys map to the same database lock; only possible where locks are
	 * narrower than keys.
	 */
	boolean sameLock(String key, String otherKey) {
		return key.equals(otherKey);
	}

	/**
	 * Unlocks the key of {@code mine}, which a claim statement on this session may just
	 * have locked. If the unlock fails on a live session, {@code mine} stays in the guard
	 * (keeping the key locked in this JVM too) and the unlock is queued on the session.
	 */
	private void unlockOrDefer(LockSession<S, Holder> session, Holder mine, @Nullable SQLException failure) {
		try {
			unlock(session.connection(), session.state(), mine.key);
		}
		catch (SQLException | RuntimeException ex) {
			if (failure != null) {
				failure.addSuppressed(ex);
			}
			if (ex instanceof SQLException sqlException && session.isDead(sqlException)) {
				lost(session, "could not free a lock", (failure != null) ? failure : ex);
				return;
			}
			logger.warn("Could not free the idempotency lock of a failed claim on " + session
					+ "; retrying before its next statement", ex);
			mine.hold(session, session.generation());
			mine.unlocking();
			session.pendingUnlocks().add(mine);
			scheduleUnlocks(session);
		}
	}

	/**
	 * Runs the unlocks queued on this session, oldest first; stops at the first one that
	 * fails on a live session (it is retried later). Requires the session's lock.
	 */
	private void runPendingUnlocks(LockSession<S, Holder> session) {
		Queue<Holder> pending = session.pendingUnlocks();
		Holder holder;
		while ((holder = pending.peek()) != null) {
			if (!session.isOpen() || holder.generation() != session.generation()) {
				// its session died, and the lock with it
				pending.remove(holder);
				forget(holder);
				continue;
			}
			try {
				boolean released = unlock(session.connection(), session.state(), holder.key);
				session.unlockSucceeded();
				pending.remove(holder);
				forget(holder);
				if (!released && logger.isDebugEnabled()) {
					logger.debug("A queued idempotency unlock found its lock already free on " + session);
				}
			}
			catch (SQLException | RuntimeException ex) {
				if (ex instanceof SQLException sqlException && session.isDead(sqlException)) {
					lost(session, "failed while running a queued unlock", ex);
					return;
				}
				if (session.unlockFailed() >= MAX_FAILED_UNLOCKS) {
					// a live session that cannot unlock (stuck in a failed transaction,
					// say):
					// ending it is the one sure way to free its locks
					lost(session, "could not run queued unlocks", ex);
					return;
				}
				logger.warn("Could not run a queued idempotency unlock on " + session + "; retrying later", ex);
				return;
			}
		}
	}

	/**
	 * Has the maintenance thread run the session's queued unlocks as soon as it is free,
	 * in case no request takes it first.
	 */
	private void scheduleUnlocks(LockSession<S, Holder> session) {
		if (this.closed || !session.drainScheduled().compareAndSet(false, true)) {
			return;
		}
		try {
			this.maintenance.execute(() -> {
				session.drainScheduled().set(false);
				if (session.pendingUnlocks().isEmpty()) {
					return;
				}
				if (tryLockSession(session, System.nanoTime() + this.settings.timeout().toNanos())) {
					try {
						runPendingUnlocks(session);
					}
					catch (RuntimeException ex) {
						logger.warn("Could not run the queued idempotency unlocks of " + session, ex);
					}
					finally {
						session.unlock();
					}
				}
				// else the session check retries
			});
		}
		catch (RejectedExecutionException ex) {
			session.drainScheduled().set(false);
		}
	}

	/**
	 * Closes a session that died or whose locks can no longer be trusted, after freeing
	 * its locks by statement if it still answers.
	 */
	private void lost(LockSession<S, Holder> session, String reason, @Nullable Throwable cause) {
		long generation = discard(session);
		long claims = this.holders.values()
			.stream()
			.filter((holder) -> holder.isHeld() && holder.sessionOrNull() == session
					&& holder.generation() == generation)
			.count();
		if (claims > 0) {
			logger.warn("Idempotency " + session + " " + reason + "; the " + claims
					+ " claim(s) it held are lost (their responses will not be stored)", cause);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Idempotency " + session + " " + reason + "; it held no claims", cause);
		}
	}

	/**
	 * Frees the session's locks by statement (best effort: a pooled connection outlives
	 * {@code close()}, and with it its locks), then closes it. Queued unlocks are moot.
	 * Requires the session's lock.
	 * @return the generation that was discarded
	 */
	private long discard(LockSession<S, Holder> session) {
		if (session.isOpen()) {
			Connection connection = session.connection();
			try {
				if (!connection.isClosed()) {
					unlockAll(connection);
				}
			}
			catch (SQLException | RuntimeException ex) {
				if (logger.isDebugEnabled()) {
					logger.debug("Could not free the locks of idempotency " + session + " before closing it", ex);
				}
			}
		}
		long generation = session.discard();
		Holder holder;
		while ((holder = session.pendingUnlocks().poll()) != null) {
			forget(holder);
		}
		return generation;
	}

	private boolean isLive(Holder holder) {
		LockSession<?, ?> session = holder.sessionOrNull();
		return session != null && holder.generation() != 0 && session.generation() == holder.generation();
	}

	@SuppressWarnings("unchecked")
	private LockSession<S, Holder> sessionOf(Holder holder) {
		return (LockSession<S, Holder>) holder.session();
	}

	private @Nullable Holder finishing(Lease lease) {
		Holder holder = this.holders.get(lease.key());
		if (holder == null || !holder.token.equals(lease.token()) || !holder.finish()) {
			return null;
		}
		return holder;
	}

	/**
	 * Ends a complete or release: either the key is free (or its session gone), or its
	 * unlock is queued on its session and the guard keeps the key until it has run.
	 */
	private void settle(Holder holder, boolean over) {
		if (over || !isLive(holder)) {
			forget(holder);
			return;
		}
		LockSession<S, Holder> session = sessionOf(holder);
		holder.unlocking();
		session.pendingUnlocks().add(holder);
		scheduleUnlocks(session);
	}

	private void forget(Holder holder) {
		this.holders.remove(holder.key, holder);
		holder.gone();
	}

	// ---- maintenance

	private void checkSessions() {
		for (LockSession<S, Holder> session : this.sessions) {
			if (this.closed) {
				return;
			}
			// a busy session proves or disproves itself with its own statements
			if (session.isOpen() && session.tryLock()) {
				try {
					runPendingUnlocks(session);
					if (session.isOpen()) {
						ping(session);
					}
				}
				catch (RuntimeException ex) {
					logger.warn("Could not check an idempotency lock session", ex);
				}
				finally {
					session.unlock();
				}
			}
		}
	}

	/**
	 * Pings an idle session, which also keeps the server from ending it as idle. A
	 * session is given up only when it is dead: closed by its driver, or silent for
	 * several pings in a row; a slow answer is not enough.
	 */
	private void ping(LockSession<S, Holder> session) {
		Connection connection = session.connection();
		boolean valid;
		try {
			valid = connection.isValid((int) Math.max(1, this.settings.networkTimeout().toSeconds()));
		}
		catch (SQLException ex) {
			valid = false;
		}
		if (valid) {
			session.pingSucceeded();
			return;
		}
		if (session.isDead(null) || session.pingFailed() >= MAX_FAILED_PINGS) {
			lost(session, "stopped answering", null);
		}
	}

	private void cleanUp() {
		try {
			int deleted = deleteExpiredRecords();
			if (deleted > 0 && logger.isDebugEnabled()) {
				logger.debug("Deleted " + deleted + " expired idempotency records");
			}
		}
		catch (RuntimeException ex) {
			if (!this.closed) {
				logger.warn("Could not delete expired idempotency records from " + this.settings.tableName()
						+ "; retrying in " + this.settings.cleanupInterval(), ex);
			}
		}
	}

	// ---- for tests

	/**
	 * Runs {@code action} on the connection of lock session {@code index}, opening it if
	 * needed, while holding the session. For tests.
	 */
	<T> T onSession(int index, SessionAction<T> action) throws SQLException {
		LockSession<S, Holder> session = this.sessions.get(index);
		lockSession(session, System.nanoTime() + this.settings.timeout().toNanos());
		try {
			openIfNeeded(session);
			return action.run(session.connection());
		}
		finally {
			session.unlock();
		}
	}

	/**
	 * Holds lock session {@code index} as a statement would, until the returned handle is
	 * run. For tests.
	 */
	Runnable occupySession(int index) {
		LockSession<S, Holder> session = this.sessions.get(index);
		Assert.state(session.tryLock(), "Session busy");
		return session::unlock;
	}

	/**
	 * Something to run on a lock session's connection.
	 *
	 * @param <T> the result
	 */
	interface SessionAction<T> {

		T run(Connection connection) throws SQLException;

	}

	private static void checkKey(String key) {
		Assert.isTrue(key != null && !key.isEmpty() && key.length() <= MAX_KEY_LENGTH,
				() -> "Storage key must be 1 to " + MAX_KEY_LENGTH + " characters");
	}

	/**
	 * What the claim statement found.
	 *
	 * @param locked whether this session took the lock
	 * @param record the unexpired record, if one exists
	 */
	record Probe(boolean locked, @Nullable StoredRecord record) {

	}

	/** All lock sessions stayed busy for the whole timeout. */
	private static final class SessionBusyException extends LockingStoreException {

		SessionBusyException(String message) {
			super(message);
		}

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
	private static final class Holder {

		final String key;

		final String token;

		private State state = State.CLAIMING;

		private @Nullable LockSession<?, ?> session;

		private long generation;

		Holder(String key, String token) {
			this.key = key;
			this.token = token;
		}

		synchronized LockSession<?, ?> session() {
			Assert.state(this.session != null, "Claim holds no session");
			return this.session;
		}

		synchronized @Nullable LockSession<?, ?> sessionOrNull() {
			return this.session;
		}

		synchronized long generation() {
			return this.generation;
		}

		synchronized boolean isHeld() {
			return this.state == State.HELD;
		}

		/** Whether the lock is, or may still be, held on its session. */
		synchronized boolean isLocked() {
			return this.state == State.HELD || this.state == State.UNLOCKING;
		}

		synchronized boolean isUnlocking() {
			return this.state == State.UNLOCKING;
		}

		synchronized void hold(LockSession<?, ?> session, long generation) {
			this.session = session;
			this.generation = generation;
			this.state = State.HELD;
			notifyAll();
		}

		synchronized boolean finish() {
			if (this.state != State.HELD) {
				return false;
			}
			this.state = State.FINISHING;
			return true;
		}

		synchronized void unlocking() {
			this.state = State.UNLOCKING;
			notifyAll();
		}

		synchronized void gone() {
			this.state = State.GONE;
			notifyAll();
		}

		/**
		 * Waits while the claim or its completion is in flight.
		 * @return {@code false} if it still was at the deadline
		 */
		synchronized boolean awaitSettled(long deadline) {
			while (this.state == State.CLAIMING || this.state == State.FINISHING) {
				long millis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
				if (millis <= 0) {
					return false;
				}
				try {
					wait(millis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			}
			return true;
		}

	}

}
