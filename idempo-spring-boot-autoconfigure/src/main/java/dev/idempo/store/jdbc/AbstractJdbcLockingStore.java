package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
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

	private final DataSource dataSource;

	private final JdbcStoreSettings settings;

	private final List<LockSession<S>> sessions;

	private final AtomicInteger nextSession = new AtomicInteger();

	private final AtomicLong generations = new AtomicLong();

	private final ConcurrentHashMap<String, Holder> holders = new ConcurrentHashMap<>();

	private final ScheduledThreadPoolExecutor maintenance;

	private volatile boolean closed;

	AbstractJdbcLockingStore(DataSource dataSource, JdbcStoreSettings settings) {
		Assert.notNull(dataSource, "'dataSource' must not be null");
		Assert.notNull(settings, "'settings' must not be null");
		this.dataSource = dataSource;
		this.settings = settings;
		List<LockSession<S>> sessions = new ArrayList<>(settings.lockSessions());
		for (int i = 0; i < settings.lockSessions(); i++) {
			sessions.add(new LockSession<>(i));
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
	 * {@link #probe}). A duplicate of a request of this JVM that is itself being claimed
	 * or completed waits for that round trip instead of answering "in progress" early.
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
			if (current.isHeld()) {
				if (isLive(current)) {
					return ClaimResult.InProgress.instance();
				}
				// its session died: the claim is lost, the key is free
				this.holders.remove(key, current);
			}
		}
		ClaimResult result = null;
		try {
			result = claimOnSession(key, mine, deadline);
			return result;
		}
		finally {
			if (!(result instanceof ClaimResult.Acquired)) {
				this.holders.remove(key, mine);
				mine.gone();
			}
		}
	}

	private ClaimResult claimOnSession(String key, Holder mine, long deadline) {
		boolean retried = false;
		while (true) {
			LockSession<S> session = lockAnySession(deadline);
			try {
				boolean opened = openIfNeeded(session);
				Probe probe;
				try {
					probe = probe(session.connection(), session.state(), key);
				}
				catch (SQLException ex) {
					if (session.isBroken(this.settings.timeoutSeconds())) {
						lost(session, "failed while claiming a key", ex);
						if (!opened && !retried) {
							// a connection that died while idle: once more on a new one
							retried = true;
							continue;
						}
						throw new LockingStoreException("Idempotency lock session failed", ex);
					}
					// the statement may have taken the lock before it failed
					freeLockOfFailedClaim(session, key, ex);
					throw new LockingStoreException("Could not claim an idempotency key", ex);
				}
				StoredRecord record = probe.record();
				if (record != null) {
					if (probe.locked()) {
						// the owner completed between our two statements: give back the
						// lock this statement took
						unlockOrLose(session, key, null);
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
	 * the claim; then nothing was stored by this call.
	 */
	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		Assert.isTrue(!ttl.isNegative() && !ttl.isZero(), "'ttl' must be positive");
		Holder holder = finishing(lease);
		if (holder == null) {
			return false;
		}
		boolean over = true;
		try {
			LockSession<S> session = sessionOf(holder);
			if (!isLive(holder)) {
				return false;
			}
			lockSession(session, System.nanoTime() + this.settings.timeout().toNanos());
			try {
				if (session.generation() != holder.generation()) {
					return false;
				}
				try {
					return storeAndUnlock(session.connection(), session.state(), lease.key(), record, ttl);
				}
				catch (SQLException ex) {
					if (session.isBroken(this.settings.timeoutSeconds())) {
						lost(session, "failed while storing a response", ex);
						return false;
					}
					try {
						afterFailedStore(session.connection());
						over = false;
					}
					catch (SQLException recovery) {
						ex.addSuppressed(recovery);
						lost(session, "could not recover from a failed store", ex);
					}
					throw new LockingStoreException("Could not store an idempotent response", ex);
				}
			}
			finally {
				session.unlock();
			}
		}
		catch (SessionBusyException ex) {
			over = false;
			throw ex;
		}
		finally {
			settle(lease.key(), holder, over);
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs on the lease's lock session. If the unlock statement fails on a live session,
	 * the session is closed, which frees the lock (and loses the other claims on it).
	 */
	@Override
	public boolean release(Lease lease) {
		Holder holder = finishing(lease);
		if (holder == null) {
			return false;
		}
		boolean over = true;
		try {
			LockSession<S> session = sessionOf(holder);
			if (!isLive(holder)) {
				return false;
			}
			lockSession(session, System.nanoTime() + this.settings.timeout().toNanos());
			try {
				if (session.generation() != holder.generation()) {
					return false;
				}
				try {
					boolean released = unlock(session.connection(), session.state(), lease.key());
					if (!released) {
						logger.warn("An idempotency lock was not held by its lock session when released");
					}
					return released;
				}
				catch (SQLException ex) {
					boolean broken = session.isBroken(this.settings.timeoutSeconds());
					lost(session,
							broken ? "failed while releasing a key" : "closed to free a lock it could not release", ex);
					if (broken) {
						return false;
					}
					throw new LockingStoreException("Could not release an idempotency lock; its session was closed",
							ex);
				}
			}
			finally {
				session.unlock();
			}
		}
		catch (SessionBusyException ex) {
			over = false;
			throw ex;
		}
		finally {
			settle(lease.key(), holder, over);
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
	 * its own, never on a lock session.
	 * @return the number of rows deleted
	 * @throws LockingStoreException if the database cannot be reached
	 */
	public int deleteExpiredRecords() {
		int total = 0;
		try (Connection connection = this.dataSource.getConnection()) {
			connection.setAutoCommit(true);
			for (int batch = 0; batch < MAX_CLEANUP_BATCHES && !this.closed; batch++) {
				int deleted = deleteExpired(connection, this.settings.cleanupBatchSize());
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

	/**
	 * Stops the maintenance thread and closes the lock sessions, which frees their locks;
	 * claims still held are lost.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.maintenance.shutdownNow();
		for (LockSession<S> session : this.sessions) {
			try {
				if (session.tryLock(this.settings.timeout().toNanos())) {
					try {
						session.discard();
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

	private LockSession<S> lockAnySession(long deadline) {
		int count = this.sessions.size();
		int first = Math.floorMod(this.nextSession.getAndIncrement(), count);
		for (int i = 0; i < count; i++) {
			LockSession<S> session = this.sessions.get((first + i) % count);
			if (session.tryLock()) {
				return session;
			}
		}
		LockSession<S> session = this.sessions.get(first);
		lockSession(session, deadline);
		return session;
	}

	private void lockSession(LockSession<S> session, long deadline) {
		try {
			if (session.tryLock(Math.max(0, deadline - System.nanoTime()))) {
				return;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		throw new SessionBusyException("No idempotency lock session was free within " + this.settings.timeout()
				+ " (idempo.store.jdbc.timeout); consider more lock sessions (idempo.store.jdbc.lock-sessions)");
	}

	private boolean openIfNeeded(LockSession<S> session) {
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
			try {
				int networkTimeout = (int) Math.max(10_000, this.settings.timeout().toMillis() * 2);
				connection.setNetworkTimeout(this.maintenance, networkTimeout);
			}
			catch (SQLFeatureNotSupportedException ex) {
				// the statement timeout still bounds every statement
			}
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
	 * Frees the lock a failed claim statement may have taken. Unlocking a lock the
	 * statement did not take is harmless unless another claim of this JVM holds the same
	 * lock on this session (another key whose lock collides with this one, as 32-bit
	 * PostgreSQL lock ids can): then unlocking could free that claim's lock instead, and
	 * the session is closed, which is sure to free everything it held.
	 */
	private void freeLockOfFailedClaim(LockSession<S> session, String key, SQLException failure) {
		long generation = session.generation();
		boolean shared = this.holders.values()
			.stream()
			.anyMatch((holder) -> !holder.key.equals(key) && holder.isHeld() && holder.session() == session
					&& holder.generation() == generation && sameLock(holder.key, key));
		if (shared) {
			lost(session, "closed to free a lock of a failed claim", failure);
			return;
		}
		unlockOrLose(session, key, failure);
	}

	/**
	 * Whether two keys map to the same database lock; only possible where locks are
	 * narrower than keys.
	 */
	boolean sameLock(String key, String otherKey) {
		return key.equals(otherKey);
	}

	/**
	 * Unlocks {@code key} on this session; if even that fails, closes the session, which
	 * frees the lock for sure.
	 */
	private void unlockOrLose(LockSession<S> session, String key, @Nullable SQLException failure) {
		try {
			unlock(session.connection(), session.state(), key);
		}
		catch (SQLException ex) {
			if (failure != null) {
				failure.addSuppressed(ex);
			}
			lost(session, "could not free a lock", (failure != null) ? failure : ex);
		}
	}

	/** Closes a session that died or whose locks can no longer be trusted. */
	private void lost(LockSession<S> session, String reason, @Nullable Throwable cause) {
		long generation = session.discard();
		long claims = this.holders.values()
			.stream()
			.filter((holder) -> holder.isHeld() && holder.session() == session && holder.generation() == generation)
			.count();
		if (claims > 0) {
			logger.warn("Idempotency " + session + " " + reason + "; the " + claims
					+ " claim(s) it held are lost (their responses will not be stored)", cause);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Idempotency " + session + " " + reason + "; it held no claims", cause);
		}
	}

	private boolean isLive(Holder holder) {
		LockSession<?> session = holder.session();
		return session != null && holder.generation() != 0 && session.generation() == holder.generation();
	}

	@SuppressWarnings("unchecked")
	private LockSession<S> sessionOf(Holder holder) {
		return (LockSession<S>) holder.session();
	}

	private @Nullable Holder finishing(Lease lease) {
		Holder holder = this.holders.get(lease.key());
		if (holder == null || !holder.token.equals(lease.token()) || !holder.finish()) {
			return null;
		}
		return holder;
	}

	private void settle(String key, Holder holder, boolean over) {
		if (over) {
			this.holders.remove(key, holder);
			holder.gone();
		}
		else {
			holder.stillHeld();
		}
	}

	// ---- maintenance

	private void checkSessions() {
		for (LockSession<S> session : this.sessions) {
			if (this.closed) {
				return;
			}
			// a busy session proves or disproves itself with its own statements
			if (session.isOpen() && session.tryLock()) {
				try {
					if (session.isOpen() && session.isBroken(this.settings.timeoutSeconds())) {
						lost(session, "stopped answering", null);
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

		private @Nullable LockSession<?> session;

		private long generation;

		Holder(String key, String token) {
			this.key = key;
			this.token = token;
		}

		synchronized LockSession<?> session() {
			Assert.state(this.session != null, "Claim holds no session");
			return this.session;
		}

		synchronized long generation() {
			return this.generation;
		}

		synchronized boolean isHeld() {
			return this.state == State.HELD;
		}

		synchronized void hold(LockSession<?> session, long generation) {
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

		synchronized void stillHeld() {
			this.state = State.HELD;
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
