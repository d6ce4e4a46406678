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
import java.util.function.Function;

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
import dev.idempo.store.jdbc.KeyGuard.State;

import org.springframework.util.Assert;

/**
 * A {@link LockingStore} on PostgreSQL ({@link #postgres}) or MySQL/MariaDB
 * ({@link #mysql}): a claim is a session-level lock held on one of a few dedicated lock
 * sessions, a completed response a row of a table; operations of many requests share a
 * round trip and a commit per lock session.
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
	 * How often a claim is tried when the record it met expired between its statements:
	 * once more is enough unless the key is completed and expires again meanwhile.
	 */
	private static final int MAX_CLAIM_ATTEMPTS = 3;

	/** Failed pings in a row after which an open connection counts as dead. */
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
	 * Creates a store on PostgreSQL and starts its two daemon maintenance threads.
	 * @param dataSource where lock sessions (kept open) and cleanup connections come
	 * from: not a connection pool, and bounding how long opening a connection may take
	 * @param settings the store settings
	 * @param lockNamespace the first key of every advisory lock the store takes
	 * @return the store
	 */
	public static JdbcLockingStore postgres(DataSource dataSource, JdbcStoreSettings settings, int lockNamespace) {
		Assert.notNull(settings, "'settings' must not be null");
		return new JdbcLockingStore(dataSource, settings, new PostgresDialect(settings.tableName(), lockNamespace));
	}

	/**
	 * Creates a store on MySQL 8 or MariaDB 10.6+ as {@link #postgres} does.
	 * @param dataSource as for {@link #postgres}; its connections should allow
	 * multi-statements ({@code allowMultiQueries=true}), else each statement is a round
	 * trip
	 * @param settings the store settings
	 * @param lockPrefix the start of every lock name: 1 to 32 letters, digits or
	 * {@code _.:/-}
	 * @return the store
	 */
	public static JdbcLockingStore mysql(DataSource dataSource, JdbcStoreSettings settings, String lockPrefix) {
		Assert.notNull(settings, "'settings' must not be null");
		return new JdbcLockingStore(dataSource, settings, new MySqlDialect(settings.tableName(), lockPrefix));
	}

	/** {@code postgres} or {@code mysql}. */
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

	/**
	 * Reads the record table on a connection of its own, never a lock session, for health
	 * endpoints.
	 * @return {@code database}, {@code table}, {@code lockSessions},
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
			List<SqlPipeline.Result> results = SqlPipeline.run(connection, false, this.settings.timeoutSeconds(),
					List.of(this.dialect.lockHeld(JdbcDialect.currentDatabase(connection), key),
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
	 * Waits up to {@link JdbcStoreSettings#timeout()} for a lock session; a duplicate of
	 * a claim or complete of this JVM in flight waits for its round trip. {@code lockTtl}
	 * is ignored: the lock lives as long as its session.
	 */
	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		Assert.isTrue(key != null && !key.isEmpty() && key.length() <= MAX_KEY_LENGTH,
				() -> "Storage key must be 1 to " + MAX_KEY_LENGTH + " characters");
		if (this.closed) {
			throw new LockingStoreException("The idempotency store is closed");
		}
		long deadline = System.nanoTime() + this.settings.timeout().toNanos();
		for (int attempt = 1; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
			ClaimResult result = claimOnce(key, deadline);
			if (result != null) {
				return result;
			}
		}
		ClaimResult last = claimOnce(key, deadline);
		return (last != null) ? last : ClaimResult.InProgress.instance();
	}

	/**
	 * One claim of {@code key}, or {@code null} when the record it met expired before it
	 * could be read (the claim's two statements ran either side of its expiry): the key
	 * is free and a new claim will lock it.
	 */
	private @Nullable ClaimResult claimOnce(String key, long deadline) {
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
			if (claim.hasVanished()) {
				return null;
			}
			StoredRecord found = claim.found();
			result = claim.succeeded() ? new ClaimResult.Acquired(new Lease(key, mine.token))
					: (found != null) ? new ClaimResult.Completed(found) : ClaimResult.InProgress.instance();
			return result;
		}
		finally {
			if (!(result instanceof ClaimResult.Acquired)) {
				if (mine.state() == State.HELD) {
					// taken, but its caller gets a failure (an Error): give the lock back
					unlockLater(mine);
				}
				else if (mine.state() != State.UNLOCKING) {
					this.guard.forget(mine);
				}
			}
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Answers {@code false}, storing nothing, if the claim's lock session died. Throws if
	 * the session stays busy for twice {@link JdbcStoreSettings#timeout()} or the store
	 * fails on a live session; the key then stays locked until its queued unlock has run.
	 */
	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		Assert.isTrue(!ttl.isNegative() && !ttl.isZero(), "'ttl' must be positive");
		return finish(lease, (holder) -> Operation.complete(holder, record, ttl.toNanos() / 1000));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * If the lock session stays busy for twice {@link JdbcStoreSettings#timeout()}, the
	 * unlock is queued on it (the key stays locked until it has run) and this answers
	 * {@code true}; if the unlock fails on a live session, it is queued and this throws.
	 */
	@Override
	public boolean release(Lease lease) {
		return finish(lease, Operation::release);
	}

	private boolean finish(Lease lease, Function<Holder, Operation> operationOf) {
		Holder holder = this.guard.finishing(lease);
		if (holder == null) {
			return false;
		}
		if (!isLive(holder)) {
			this.guard.forget(holder);
			return false;
		}
		Operation operation = operationOf.apply(holder);
		if (!this.scheduler.runOn(sessionOf(holder), operation, finishingDeadline())) {
			// its unlock runs before the session's next statement
			unlockLater(holder);
			if (operation.kind == Operation.Kind.COMPLETE) {
				throw busy();
			}
			return true;
		}
		Throwable failure = operation.failure();
		if (failure != null) {
			throw rethrow(failure);
		}
		return operation.succeeded();
	}

	/**
	 * Reports, without a round trip, whether {@code lease} still holds its key: locks are
	 * lost only with their session. {@code lockTtl} is ignored.
	 */
	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		Holder holder = this.guard.get(lease.key());
		return holder != null && holder.token.equals(lease.token()) && holder.state() == State.HELD && isLive(holder);
	}

	/**
	 * Deletes expired records now, as the maintenance thread does every
	 * {@link JdbcStoreSettings#cleanupInterval()}.
	 * @return the number of rows deleted
	 * @throws LockingStoreException if the database cannot be reached
	 */
	public int deleteExpiredRecords() {
		return this.cleanup.deleteExpiredRecords();
	}

	/**
	 * Stops the maintenance threads and closes the lock sessions, which frees their
	 * locks; queued claims throw, queued completes and releases answer {@code false}.
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

	private LockingStoreException busy() {
		return new LockingStoreException("No idempotency lock session was free within " + this.settings.timeout()
				+ " (idempo.store.jdbc.timeout); consider more lock sessions (idempo.store.jdbc.lock-sessions)");
	}

	/** Twice the timeout: a batch ahead of a complete or release may take the timeout. */
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

	/** Keeps the key taken until its queued unlock has run on its session. */
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

	private void checkSessions() {
		for (LockSession session : this.pool.sessions()) {
			if (this.closed) {
				return;
			}
			// a busy session proves or disproves itself with its own statements
			if (session.isOpen()) {
				this.scheduler.runMaintenance(session, 0, (checked) -> {
					this.runner.runBatch(checked);
					if (checked.isOpen()) {
						ping(checked);
					}
				});
			}
		}
	}

	/** Pings an idle session, given up only when dead: a slow answer is not enough. */
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

	// for tests

	/** Holds the session (waiting up to the timeout) until the answer runs. */
	Runnable occupySession(int index) {
		LockSession session = this.pool.get(index);
		try {
			Assert.state(session.tryRun(this.settings.timeout().toNanos()), "Session busy");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		return () -> {
			session.endRun();
			this.scheduler.handOff(session);
		};
	}

	LockSession session(int index) {
		return this.pool.get(index);
	}

	/** How many claims wait for a session. */
	int queuedClaims() {
		return this.pool.claims().size();
	}

}
