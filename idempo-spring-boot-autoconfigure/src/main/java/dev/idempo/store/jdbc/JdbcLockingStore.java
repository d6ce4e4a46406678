package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
import dev.idempo.store.OwnerTokens;
import dev.idempo.store.RecordState;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.KeyGuard.Holder;

import org.springframework.util.Assert;

/**
 * A {@link LockingStore} on PostgreSQL ({@link #postgres}) or MySQL/MariaDB
 * ({@link #mysql}): a claim is a session-level database lock held on one of a few
 * dedicated lock sessions, a completed response is a row of a table. Operations of many
 * requests are combined into one round trip, and their stores into one durable commit,
 * per lock session. The design, the connection discipline and the failure semantics are
 * described in the {@linkplain dev.idempo.store.jdbc package documentation}.
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

	private final BatchRunner runner;

	private final SessionScheduler scheduler;

	private final ExpiredRecordCleanup cleanup;

	private final ScheduledThreadPoolExecutor maintenance;

	private volatile boolean closed;

	private final DataSource dataSource;

	JdbcLockingStore(DataSource dataSource, JdbcStoreSettings settings, JdbcDialect dialect) {
		Assert.notNull(dataSource, "'dataSource' must not be null");
		this.dataSource = dataSource;
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
		this.runner = new BatchRunner(dialect, this.guard, this.pool, settings, settings.batching());
		this.scheduler = settings.batching() ? new BatchScheduler(this.pool, this.runner, this.maintenance, settings)
				: new PlainScheduler(this.pool, this.runner, this.maintenance, settings);
		this.cleanup = new ExpiredRecordCleanup(dataSource, dialect, settings, this.pool);
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
	 * Checks, for health endpoints, that the database answers where lock sessions come
	 * from (a connection of its own, outside the application's pool, as lock sessions
	 * are) and reads the record table, and tells how many lock sessions are open. Never
	 * takes a lock session from requests.
	 * @return the details: {@code database}, {@code lockSessions},
	 * {@code openLockSessions}
	 * @throws LockingStoreException if the database cannot be reached or the table read
	 */
	public Map<String, Object> checkHealth() {
		if (this.closed) {
			throw new LockingStoreException("The idempotency store is closed");
		}
		try (Connection connection = this.dataSource.getConnection()) {
			SqlPipeline.run(connection, false, this.settings.timeoutSeconds(),
					List.of(new SqlPipeline.Sql("SELECT 1 FROM " + this.settings.tableName() + " WHERE storage_key = ?",
							"health")));
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("database", connection.getMetaData().getDatabaseProductName() + " "
					+ connection.getMetaData().getDatabaseProductVersion());
			details.put("table", this.settings.tableName());
			details.put("lockSessions", this.settings.lockSessions());
			details.put("openLockSessions", this.pool.sessions().stream().filter(LockSession::isOpen).count());
			return details;
		}
		catch (SQLException | RuntimeException ex) {
			throw new LockingStoreException("The idempotency database cannot be reached: " + ex.getMessage(), ex);
		}
	}

	@Override
	public RecordState inspect(String key) {
		try (Connection connection = this.dataSource.getConnection()) {
			String database = connection.getCatalog();
			if (database == null) {
				// MySQL Connector/J with databaseTerm=SCHEMA
				database = connection.getSchema();
			}
			List<SqlPipeline.Result> results = SqlPipeline.run(connection, false, this.settings.timeoutSeconds(),
					List.of(this.dialect.lockHeld((database != null) ? database : "", key),
							this.dialect.recordWithExpiry(key)));
			boolean inFlight = JdbcDialect.isTrue(results.get(0).rows().get(0)[0]);
			List<@Nullable Object[]> rows = results.get(1).rows();
			if (rows.isEmpty()) {
				return new RecordState(inFlight, null, null);
			}
			@Nullable Object[] row = rows.get(0);
			Instant expiresAt = (row[2] instanceof Number micros)
					? Instant.now().plus(micros.longValue(), ChronoUnit.MICROS) : null;
			return new RecordState(inFlight, JdbcDialect.record(row[0], row[1]), expiresAt);
		}
		catch (SQLException | RuntimeException ex) {
			throw new LockingStoreException("Could not inspect an idempotency key: " + ex.getMessage(), ex);
		}
	}

	@Override
	public boolean evict(String key) {
		try (Connection connection = this.dataSource.getConnection()) {
			return SqlPipeline
				.run(connection, false, this.settings.timeoutSeconds(), List.of(this.dialect.deleteRecord(key)))
				.get(0)
				.updateCount() > 0;
		}
		catch (SQLException | RuntimeException ex) {
			throw new LockingStoreException("Could not evict an idempotency record: " + ex.getMessage(), ex);
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs in the next batch of whichever lock session is free first (one round trip,
	 * shared with the other operations of that batch), waiting up to
	 * {@link JdbcStoreSettings#timeout()} for it to start. A duplicate of a request of
	 * this JVM that is itself being claimed or completed waits for that round trip
	 * instead of answering "in progress" early. {@code lockTtl} is ignored: the lock
	 * lives as long as its session.
	 */
	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		checkKey(key);
		if (this.closed) {
			throw new LockingStoreException("The idempotency store is closed");
		}
		long deadline = System.nanoTime() + this.settings.timeout().toNanos();
		Holder mine = this.guard.enter(key, OwnerTokens.next(), deadline, this::isLive);
		if (mine == null) {
			return ClaimResult.InProgress.instance();
		}
		ClaimResult result = null;
		try {
			Operation claim = Operation.claim(mine, deadline);
			if (!this.scheduler.runClaim(claim, deadline)) {
				throw busy();
			}
			Throwable failure = claim.failure();
			if (failure != null) {
				throw rethrow(failure);
			}
			StoredRecord found = claim.found();
			if (claim.succeeded()) {
				result = new ClaimResult.Acquired(new Lease(key, mine.token));
			}
			else {
				result = (found != null) ? new ClaimResult.Completed(found) : ClaimResult.InProgress.instance();
			}
			return result;
		}
		finally {
			if (!(result instanceof ClaimResult.Acquired)) {
				if (mine.isHeld()) {
					// taken, but its caller gets a failure (an Error reached this thread
					// after its claim was settled): give the lock back
					unlockLater(mine);
				}
				else if (!mine.isUnlocking()) {
					this.guard.forget(mine);
				}
			}
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs in the next batch of the lease's lock session, whose stores share one
	 * transaction and one durable commit; every batch takes its session's waiting
	 * completes before any claim. Answers {@code false} if that session died since the
	 * claim; then nothing was stored by this call. If the batch fails, what it did is
	 * read back from the database and the complete runs again on its own; if the response
	 * still cannot be stored (the session stayed busy for twice
	 * {@link JdbcStoreSettings#timeout()}, or the statement fails on a live session) this
	 * throws, and the key stays locked until its unlock has run on that session: right
	 * away where possible, else before the session's next statement.
	 */
	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		Assert.isTrue(!ttl.isNegative() && !ttl.isZero(), "'ttl' must be positive");
		Holder holder = this.guard.finishing(lease);
		if (holder == null) {
			return false;
		}
		if (!isLive(holder)) {
			this.guard.forget(holder);
			return false;
		}
		Operation complete = Operation.complete(holder, record, ttl.toNanos() / 1000);
		if (!this.scheduler.runOn(sessionOf(holder), complete, finishingDeadline())) {
			unlockLater(holder);
			throw busy();
		}
		Throwable failure = complete.failure();
		if (failure != null) {
			throw rethrow(failure);
		}
		return complete.succeeded();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs in the next batch of the lease's lock session. If that session stays busy for
	 * twice {@link JdbcStoreSettings#timeout()}, the unlock is queued on it and runs
	 * before the session's next statement (the key stays locked until then), and this
	 * answers {@code true}. If the unlock statement fails on a live session, it is queued
	 * the same way and this throws; the session, and the other claims on it, are kept.
	 */
	@Override
	public boolean release(Lease lease) {
		Holder holder = this.guard.finishing(lease);
		if (holder == null) {
			return false;
		}
		if (!isLive(holder)) {
			this.guard.forget(holder);
			return false;
		}
		Operation release = Operation.release(holder);
		if (!this.scheduler.runOn(sessionOf(holder), release, finishingDeadline())) {
			// runs before the session's next statement
			unlockLater(holder);
			return true;
		}
		Throwable failure = release.failure();
		if (failure != null) {
			throw rethrow(failure);
		}
		return release.succeeded();
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
	 * locks by statement; claims still held are lost, and operations still queued end:
	 * claims throw, completes and releases answer {@code false}.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.maintenance.shutdownNow();
		this.scheduler.close();
	}

	// ---- helpers

	private LockingStoreException busy() {
		return new LockingStoreException("No idempotency lock session was free within " + this.settings.timeout()
				+ " (idempo.store.jdbc.timeout); consider more lock sessions (idempo.store.jdbc.lock-sessions)");
	}

	/**
	 * When a complete or release gives up waiting for its session: after
	 * {@link JdbcStoreSettings#timeout()} plus one batch's worth (a batch ahead of it may
	 * run up to the timeout), so that a busy session does not make it fail.
	 */
	private long finishingDeadline() {
		return System.nanoTime() + 2 * this.settings.timeout().toNanos();
	}

	private static RuntimeException rethrow(Throwable failure) {
		if (failure instanceof RuntimeException runtime) {
			return runtime;
		}
		if (failure instanceof Error error) {
			throw error;
		}
		return new LockingStoreException("Idempotency store operation failed", failure);
	}

	private boolean isLive(Holder holder) {
		int session = holder.session();
		return session >= 0 && holder.generation() != 0 && this.pool.get(session).generation() == holder.generation();
	}

	private LockSession sessionOf(Holder holder) {
		int session = holder.session();
		Assert.state(session >= 0, "Claim holds no session");
		return this.pool.get(session);
	}

	/**
	 * Keeps the key of a claim whose complete or release never started taken until its
	 * queued unlock has run on its session.
	 */
	private void unlockLater(Holder holder) {
		if (!isLive(holder)) {
			this.guard.forget(holder);
			return;
		}
		LockSession session = sessionOf(holder);
		this.guard.unlocking(holder);
		session.unlocks().add(holder);
		this.scheduler.scheduleDrain(session);
	}

	// ---- maintenance

	private void checkSessions() {
		for (LockSession session : this.pool.sessions()) {
			if (this.closed) {
				return;
			}
			// a busy session proves or disproves itself with its own statements
			if (session.isOpen()) {
				this.scheduler.runMaintenance(session, 0, (checked) -> {
					this.runner.drain(checked);
					if (checked.isOpen()) {
						ping(checked);
					}
				});
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
			// no longer than a statement may take: a ping holds the session
			valid = connection.isValid((int) Math.max(1,
					Math.min(this.settings.timeout().toSeconds(), this.settings.networkTimeout().toSeconds())));
		}
		catch (SQLException ex) {
			valid = false;
		}
		if (valid) {
			session.pingSucceeded();
			return;
		}
		if (session.isDead(null) || session.pingFailed() >= MAX_FAILED_PINGS) {
			this.runner.lost(session, "stopped answering", null);
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
	<T> @Nullable T onSession(int index, SessionAction<T> action) throws SQLException {
		LockSession session = this.pool.get(index);
		try {
			Assert.state(session.tryRun(this.settings.timeout().toNanos()), "Session busy");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		try {
			this.pool.openIfNeeded(session);
			return action.run(session.connection());
		}
		finally {
			session.endRun();
			this.scheduler.handOff(session);
		}
	}

	/**
	 * Holds lock session {@code index} as a statement would, until the returned handle is
	 * run. For tests.
	 */
	Runnable occupySession(int index) {
		LockSession session = this.pool.get(index);
		Assert.state(session.tryRun(), "Session busy");
		return () -> {
			session.endRun();
			this.scheduler.handOff(session);
		};
	}

	/**
	 * Something to run on a lock session's connection.
	 *
	 * @param <T> the result
	 */
	interface SessionAction<T> {

		@Nullable T run(Connection connection) throws SQLException;

	}

	private static void checkKey(String key) {
		Assert.isTrue(key != null && !key.isEmpty() && key.length() <= MAX_KEY_LENGTH,
				() -> "Storage key must be 1 to " + MAX_KEY_LENGTH + " characters");
	}

}
