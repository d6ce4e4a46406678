package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.JdbcDialect.Probe;
import dev.idempo.store.jdbc.JdbcDialect.Stored;
import dev.idempo.store.jdbc.KeyGuard.Holder;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

import org.springframework.util.Assert;

/**
 * A {@link LockingStore} on PostgreSQL ({@link #postgres}) or MySQL/MariaDB
 * ({@link #mysql}): a claim is a session-level database lock held on one of a few
 * dedicated lock sessions, a completed response is a row of a table. The design, the
 * connection discipline and the failure semantics are described in the
 * {@linkplain dev.idempo.store.jdbc package documentation}.
 *
 * @author idempo
 */
public final class JdbcLockingStore implements LockingStore, AutoCloseable {

	/** The default PostgreSQL lock namespace, the ASCII codes of "idmp" as an int. */
	public static final int DEFAULT_LOCK_NAMESPACE = 0x69646D70;

	/** The default MySQL/MariaDB lock name prefix. */
	public static final String DEFAULT_LOCK_PREFIX = "idempo:";

	private static final Log logger = LogFactory.getLog(JdbcLockingStore.class);

	private static final int MAX_KEY_LENGTH = 128;

	/**
	 * Failed pings in a row after which a connection that is still open counts as dead.
	 */
	private static final int MAX_FAILED_PINGS = 3;

	private final JdbcDialect dialect;

	private final JdbcStoreSettings settings;

	private final KeyGuard guard = new KeyGuard();

	private final LockSessionPool pool;

	private final ExpiredRecordCleanup cleanup;

	private final ScheduledThreadPoolExecutor maintenance;

	private volatile boolean closed;

	JdbcLockingStore(DataSource dataSource, JdbcStoreSettings settings, JdbcDialect dialect) {
		Assert.notNull(dataSource, "'dataSource' must not be null");
		Assert.notNull(settings, "'settings' must not be null");
		this.dialect = dialect;
		this.settings = settings;
		// two threads, so that a long cleanup never delays the session checks
		this.maintenance = new ScheduledThreadPoolExecutor(2, (runnable) -> {
			Thread thread = new Thread(runnable, "idempo-jdbc-store");
			thread.setDaemon(true);
			return thread;
		});
		this.maintenance.setRemoveOnCancelPolicy(true);
		this.pool = new LockSessionPool(dataSource, dialect, settings, this.maintenance);
		this.cleanup = new ExpiredRecordCleanup(dataSource, dialect, settings, this.pool, () -> this.closed);
		long check = settings.sessionCheckInterval().toMillis();
		long cleanup = settings.cleanupInterval().toMillis();
		this.maintenance.scheduleWithFixedDelay(this::checkSessions, check, check, TimeUnit.MILLISECONDS);
		this.maintenance.scheduleWithFixedDelay(this.cleanup, cleanup, cleanup, TimeUnit.MILLISECONDS);
	}

	/**
	 * Creates a store on PostgreSQL. Lock sessions are opened from {@code dataSource} on
	 * demand and kept open, so it should not be a connection pool, least of all the
	 * application's own, and it should bound how long opening a connection may take (see
	 * the {@linkplain dev.idempo.store.jdbc package documentation}). Starts two daemon
	 * maintenance threads; {@link #close()} stops them.
	 * @param dataSource where lock sessions and cleanup connections come from
	 * @param settings the store settings
	 * @param lockNamespace the first key of every advisory lock the store takes
	 * @return the store
	 */
	public static JdbcLockingStore postgres(DataSource dataSource, JdbcStoreSettings settings, int lockNamespace) {
		Assert.notNull(settings, "'settings' must not be null");
		return new JdbcLockingStore(dataSource, settings, new PostgresDialect(settings.tableName(), lockNamespace));
	}

	/**
	 * Creates a store on MySQL 8 or MariaDB 10.6 and later, through either JDBC driver.
	 * Lock sessions are opened from {@code dataSource} as for {@link #postgres}; their
	 * connections should allow multi-statements ({@code allowMultiQueries=true}, which
	 * the auto-configuration sets), else each statement is a round trip of its own.
	 * @param dataSource where lock sessions and cleanup connections come from
	 * @param settings the store settings
	 * @param lockPrefix the start of every lock name: 1 to 32 letters, digits or
	 * {@code _.:/-}
	 * @return the store
	 */
	public static JdbcLockingStore mysql(DataSource dataSource, JdbcStoreSettings settings, String lockPrefix) {
		Assert.notNull(settings, "'settings' must not be null");
		return new JdbcLockingStore(dataSource, settings, new MySqlDialect(settings.tableName(), lockPrefix));
	}

	/**
	 * {@code postgres} or {@code mysql}.
	 */
	@Override
	public String name() {
		return this.dialect.name();
	}

	JdbcDialect dialect() {
		return this.dialect;
	}

	JdbcStoreSettings settings() {
		return this.settings;
	}

	// ---- LockingStore

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs one statement round trip on a free lock session (rarely two: see
	 * {@link JdbcDialect#claim}), waiting up to {@link JdbcStoreSettings#timeout()} for
	 * any session to be free. A duplicate of a request of this JVM that is itself being
	 * claimed or completed waits for that round trip instead of answering "in progress"
	 * early. {@code lockTtl} is ignored: the lock lives as long as its session.
	 */
	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		checkKey(key);
		if (this.closed) {
			throw new LockingStoreException("The idempotency store is closed");
		}
		long deadline = System.nanoTime() + this.settings.timeout().toNanos();
		Holder mine = this.guard.enter(key, UUID.randomUUID().toString(), deadline, this::isLive);
		if (mine == null) {
			return ClaimResult.InProgress.instance();
		}
		ClaimResult result = null;
		try {
			result = claimOnSession(key, mine, deadline);
			return result;
		}
		finally {
			if (!(result instanceof ClaimResult.Acquired) && !mine.isUnlocking()) {
				this.guard.forget(mine);
			}
		}
	}

	private ClaimResult claimOnSession(String key, Holder mine, long deadline) {
		boolean retried = false;
		while (true) {
			LockSession session = this.pool.lockAny(deadline);
			try {
				runPendingUnlocks(session);
				boolean opened = this.pool.openIfNeeded(session);
				Probe probe;
				try {
					List<Result> results = run(session, this.dialect.claim(session.info(), key));
					probe = this.dialect.readClaim(results);
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
		Holder holder = this.guard.finishing(lease);
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
			LockSession session = holder.session();
			this.pool.lock(session, System.nanoTime() + this.settings.timeout().toNanos());
			try {
				runPendingUnlocks(session);
				if (session.generation() != holder.generation()) {
					over = true;
					return false;
				}
				try {
					Stored stored = this.dialect
						.readStore(run(session, this.dialect.storeAndUnlock(session.info(), lease.key(), record, ttl)));
					over = true;
					if (stored.stored() && !stored.unlocked()) {
						logger
							.warn("An idempotency lock was not held by its lock session when its response was stored");
					}
					return stored.stored();
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
	private boolean undoFailedStore(LockSession session, Holder holder, SQLException failure) {
		try {
			List<Sql> undo = this.dialect.afterFailedStore();
			if (!undo.isEmpty()) {
				run(session, undo);
			}
			unlock(session, holder);
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
		Holder holder = this.guard.finishing(lease);
		if (holder == null) {
			return false;
		}
		boolean over = false;
		try {
			if (!isLive(holder)) {
				over = true;
				return false;
			}
			LockSession session = holder.session();
			if (!this.pool.tryLock(session, System.nanoTime() + this.settings.timeout().toNanos())) {
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
					boolean released = unlock(session, holder);
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
		Holder holder = this.guard.get(lease.key());
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
		return this.cleanup.deleteExpiredRecords();
	}

	/**
	 * Stops the maintenance threads and closes the lock sessions, after freeing their
	 * locks by statement; claims still held are lost.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.maintenance.shutdownNow();
		this.pool.close((session) -> session.unlocks().clear(this.guard));
	}

	// ---- statements

	private List<Result> run(LockSession session, List<Sql> statements) throws SQLException {
		return SqlPipeline.run(session.connection(), session.info().multiStatements(), this.settings.timeoutSeconds(),
				statements);
	}

	private boolean unlock(LockSession session, Holder holder) throws SQLException {
		List<Result> results = run(session, List.of(this.dialect.unlock(session.info(), holder.key)));
		return this.dialect.readUnlock(results.get(0));
	}

	/**
	 * Frees the lock a failed claim statement may have taken. Unlocking a lock the
	 * statement did not take is harmless unless another claim of this JVM holds the same
	 * lock on this session (another key whose lock collides with this one, as 32-bit
	 * PostgreSQL lock ids can): then unlocking could free that claim's lock instead, and
	 * the session is closed, which is sure to free everything it held.
	 */
	private void freeLockOfFailedClaim(LockSession session, Holder mine, SQLException failure) {
		if (this.guard.sharesLock(mine, session, session.generation(), this.dialect::sameLock)) {
			lost(session, "closed to free a lock of a failed claim", failure);
			return;
		}
		unlockOrDefer(session, mine, failure);
	}

	/**
	 * Unlocks the key of {@code mine}, which a claim statement on this session may just
	 * have locked. If the unlock fails on a live session, {@code mine} stays in the guard
	 * (keeping the key locked in this JVM too) and the unlock is queued on the session.
	 */
	private void unlockOrDefer(LockSession session, Holder mine, @Nullable SQLException failure) {
		try {
			unlock(session, mine);
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
			session.unlocks().add(mine);
			scheduleUnlocks(session);
		}
	}

	/**
	 * Runs the unlocks queued on this session. Requires the session's lock.
	 */
	private void runPendingUnlocks(LockSession session) {
		session.unlocks().drain(session, (holder) -> unlock(session, holder), this.guard, this::lost);
	}

	/**
	 * Has the maintenance thread run the session's queued unlocks as soon as it is free,
	 * in case no request takes it first.
	 */
	private void scheduleUnlocks(LockSession session) {
		UnlockQueue unlocks = session.unlocks();
		if (this.closed || !unlocks.scheduleDrain()) {
			return;
		}
		try {
			this.maintenance.execute(() -> {
				unlocks.drainStarted();
				if (unlocks.isEmpty()) {
					return;
				}
				if (this.pool.tryLock(session, System.nanoTime() + this.settings.timeout().toNanos())) {
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
			unlocks.drainStarted();
		}
	}

	/**
	 * Closes a session that died or whose locks can no longer be trusted, after freeing
	 * its locks by statement if it still answers. Requires the session's lock.
	 */
	private void lost(LockSession session, String reason, @Nullable Throwable cause) {
		long generation = this.pool.discard(session);
		session.unlocks().clear(this.guard);
		long claims = this.guard.heldOn(session, generation);
		if (claims > 0) {
			logger.warn("Idempotency " + session + " " + reason + "; the " + claims
					+ " claim(s) it held are lost (their responses will not be stored)", cause);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Idempotency " + session + " " + reason + "; it held no claims", cause);
		}
	}

	private boolean isLive(Holder holder) {
		LockSession session = holder.sessionOrNull();
		return session != null && holder.generation() != 0 && session.generation() == holder.generation();
	}

	/**
	 * Ends a complete or release: either the key is free (or its session gone), or its
	 * unlock is queued on its session and the guard keeps the key until it has run.
	 */
	private void settle(Holder holder, boolean over) {
		if (over || !isLive(holder)) {
			this.guard.forget(holder);
			return;
		}
		LockSession session = holder.session();
		holder.unlocking();
		session.unlocks().add(holder);
		scheduleUnlocks(session);
	}

	// ---- maintenance

	private void checkSessions() {
		for (LockSession session : this.pool.sessions()) {
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
	private void ping(LockSession session) {
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

	// ---- for tests

	/**
	 * Prepares {@code connection} as a lock session, as the store does with the ones it
	 * opens. For tests.
	 */
	void openSession(Connection connection) throws SQLException {
		this.dialect.openSession(connection, this.settings);
	}

	/**
	 * Deletes at most {@code limit} expired rows on {@code connection}. For tests.
	 */
	int deleteExpired(Connection connection, int limit) throws SQLException {
		return this.cleanup.deleteExpired(connection, limit);
	}

	/**
	 * Runs {@code action} on the connection of lock session {@code index}, opening it if
	 * needed, while holding the session. For tests.
	 */
	<T> T onSession(int index, SessionAction<T> action) throws SQLException {
		LockSession session = this.pool.get(index);
		this.pool.lock(session, System.nanoTime() + this.settings.timeout().toNanos());
		try {
			this.pool.openIfNeeded(session);
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
		LockSession session = this.pool.get(index);
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

}
