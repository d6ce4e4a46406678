package dev.idempo.store.jdbc;

import java.time.Duration;

import org.springframework.util.Assert;

/**
 * Settings shared by the PostgreSQL and MySQL/MariaDB stores.
 *
 * @param tableName the table that keeps completed responses, optionally qualified by a
 * schema ({@code schema.table}); letters, digits and underscores only
 * @param lockSessions how many dedicated database sessions hold the locks of in-flight
 * requests; every request's lock lives on one of them
 * @param timeout the longest a claim waits for a lock session (a complete or release,
 * which can only run on its claim's session, waits twice as long, so as to outlast one
 * batch ahead of it), and the statement timeout of its SQL; beyond it the operation fails
 * with a {@link dev.idempo.store.LockingStoreException}
 * @param sessionCheckInterval how often idle lock sessions are checked, so that claims on
 * a session that died are given up within about this long
 * @param cleanupInterval how often expired rows are deleted
 * @param cleanupBatchSize the most rows one {@code DELETE} removes; a cleanup run repeats
 * it while full batches come back
 * @param networkTimeout how long a lock session's connection waits for the server to
 * answer at all before its driver gives it up as dead, and its claims with it; also what
 * bounds a request whose lock session stops answering. {@code null} for the default,
 * twice the timeout in whole seconds and at least 10 seconds
 * @param batching whether the operations of concurrent requests are combined into batches
 * of one round trip each (the default), rather than each run alone, one statement per
 * round trip
 * @author idempo
 */
public record JdbcStoreSettings(String tableName, int lockSessions, Duration timeout, Duration sessionCheckInterval,
		Duration cleanupInterval, int cleanupBatchSize, Duration networkTimeout, boolean batching) {

	/** The default table name, also the one written in the shipped schema scripts. */
	public static final String DEFAULT_TABLE_NAME = JdbcStoreSchema.DEFAULT_TABLE_NAME;

	/** The least default network timeout. */
	private static final Duration MIN_DEFAULT_NETWORK_TIMEOUT = Duration.ofSeconds(10);

	public JdbcStoreSettings {
		JdbcStoreSchema.checkTableName(tableName);
		Assert.isTrue(lockSessions > 0, "'lockSessions' must be positive");
		Assert.isTrue(isPositive(timeout), "'timeout' must be positive");
		if (networkTimeout == null) {
			networkTimeout = defaultNetworkTimeout(timeout);
		}
		Assert.isTrue(networkTimeout.compareTo(Duration.ofSeconds(1)) >= 0, "'networkTimeout' must be at least 1s");
		// a live statement may take the whole timeout: a shorter network timeout would
		// end
		// healthy sessions
		Assert.isTrue(networkTimeout.compareTo(timeout) >= 0, "'networkTimeout' must not be shorter than 'timeout'");
		Assert.isTrue(networkTimeout.toMillis() <= Integer.MAX_VALUE,
				"'networkTimeout' must be at most " + Integer.MAX_VALUE + " ms (JDBC counts it in an int)");
		Assert.isTrue(isPositive(sessionCheckInterval), "'sessionCheckInterval' must be positive");
		Assert.isTrue(isPositive(cleanupInterval), "'cleanupInterval' must be positive");
		Assert.isTrue(cleanupBatchSize > 0, "'cleanupBatchSize' must be positive");
	}

	/**
	 * Settings with batching.
	 * @param tableName the table name
	 * @param lockSessions the number of lock sessions
	 * @param timeout the timeout
	 * @param sessionCheckInterval the session check interval
	 * @param cleanupInterval the cleanup interval
	 * @param cleanupBatchSize the cleanup batch size
	 * @param networkTimeout the network timeout, {@code null} for the default
	 */
	public JdbcStoreSettings(String tableName, int lockSessions, Duration timeout, Duration sessionCheckInterval,
			Duration cleanupInterval, int cleanupBatchSize, Duration networkTimeout) {
		this(tableName, lockSessions, timeout, sessionCheckInterval, cleanupInterval, cleanupBatchSize, networkTimeout,
				true);
	}

	/**
	 * Settings with the default network timeout.
	 * @param tableName the table name
	 * @param lockSessions the number of lock sessions
	 * @param timeout the timeout
	 * @param sessionCheckInterval the session check interval
	 * @param cleanupInterval how often expired rows are deleted
	 * @param cleanupBatchSize the most rows one delete removes
	 */
	public JdbcStoreSettings(String tableName, int lockSessions, Duration timeout, Duration sessionCheckInterval,
			Duration cleanupInterval, int cleanupBatchSize) {
		this(tableName, lockSessions, timeout, sessionCheckInterval, cleanupInterval, cleanupBatchSize, null);
	}

	/**
	 * The defaults: table {@value #DEFAULT_TABLE_NAME}, 4 lock sessions, 5s timeout,
	 * sessions checked every 10s, cleanup every minute in batches of 500 rows.
	 * @return the default settings
	 */
	public static JdbcStoreSettings defaults() {
		return new JdbcStoreSettings(DEFAULT_TABLE_NAME, 4, Duration.ofSeconds(5), Duration.ofSeconds(10),
				Duration.ofMinutes(1), 500);
	}

	/**
	 * A copy with another table name.
	 * @param tableName the table name
	 * @return the new settings
	 */
	public JdbcStoreSettings withTableName(String tableName) {
		return new JdbcStoreSettings(tableName, this.lockSessions, this.timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, this.networkTimeout, this.batching);
	}

	/**
	 * A copy with another number of lock sessions.
	 * @param lockSessions the number of lock sessions
	 * @return the new settings
	 */
	public JdbcStoreSettings withLockSessions(int lockSessions) {
		return new JdbcStoreSettings(this.tableName, lockSessions, this.timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, this.networkTimeout, this.batching);
	}

	/**
	 * A copy with another timeout.
	 * @param timeout the timeout
	 * @return the new settings
	 */
	public JdbcStoreSettings withTimeout(Duration timeout) {
		// a default network timeout follows the timeout; one set explicitly stays
		Duration network = this.networkTimeout.equals(defaultNetworkTimeout(this.timeout)) ? null : this.networkTimeout;
		return new JdbcStoreSettings(this.tableName, this.lockSessions, timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, network, this.batching);
	}

	/**
	 * A copy with another session check interval.
	 * @param sessionCheckInterval the session check interval
	 * @return the new settings
	 */
	public JdbcStoreSettings withSessionCheckInterval(Duration sessionCheckInterval) {
		return new JdbcStoreSettings(this.tableName, this.lockSessions, this.timeout, sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, this.networkTimeout, this.batching);
	}

	/**
	 * A copy with another cleanup schedule.
	 * @param cleanupInterval how often expired rows are deleted
	 * @param cleanupBatchSize the most rows one delete removes
	 * @return the new settings
	 */
	public JdbcStoreSettings withCleanup(Duration cleanupInterval, int cleanupBatchSize) {
		return new JdbcStoreSettings(this.tableName, this.lockSessions, this.timeout, this.sessionCheckInterval,
				cleanupInterval, cleanupBatchSize, this.networkTimeout, this.batching);
	}

	/**
	 * A copy with another network timeout.
	 * @param networkTimeout the network timeout, at least a second; {@code null} for the
	 * default
	 * @return the new settings
	 */
	public JdbcStoreSettings withNetworkTimeout(Duration networkTimeout) {
		return new JdbcStoreSettings(this.tableName, this.lockSessions, this.timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, networkTimeout, this.batching);
	}

	/**
	 * These settings with operations combined into batches or each run alone.
	 * @param batching whether to combine operations into batches
	 * @return the settings
	 */
	public JdbcStoreSettings withBatching(boolean batching) {
		return new JdbcStoreSettings(this.tableName, this.lockSessions, this.timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, this.networkTimeout, batching);
	}

	/**
	 * The statement timeout in whole seconds, as JDBC wants it: the timeout rounded up.
	 * @return the statement timeout in seconds, at least 1
	 */
	int timeoutSeconds() {
		return (int) Math.max(1, (this.timeout.toMillis() + 999) / 1000);
	}

	/**
	 * The default network timeout: twice the timeout in whole seconds, at least 10
	 * seconds. The server bounds most statements of a session by the timeout (statement
	 * and lock-wait timeouts, which leave the connection alive and answer with an error),
	 * but not every wait (a commit's disk flush, MySQL's writes, semi-synchronous
	 * replication), and a pipeline's answers come together: a session given up too soon
	 * loses the claims of requests whose handlers still run.
	 */
	private static Duration defaultNetworkTimeout(Duration timeout) {
		long twice = 2L * Math.max(1, (timeout.toMillis() + 999) / 1000);
		return Duration.ofSeconds(Math.max(twice, MIN_DEFAULT_NETWORK_TIMEOUT.toSeconds()));
	}

	/**
	 * How long the server may leave a lock session without a statement before it ends the
	 * session: four session check intervals, at least a minute. The store pings every
	 * idle session once per check interval, so only the sessions of an instance that
	 * vanished without closing its connections (host lost, network cut) run into it; the
	 * server then frees their locks instead of waiting for TCP keepalive.
	 * @return the idle timeout
	 */
	Duration sessionIdleTimeout() {
		Duration fourChecks = this.sessionCheckInterval.multipliedBy(4);
		return (fourChecks.compareTo(Duration.ofMinutes(1)) > 0) ? fourChecks : Duration.ofMinutes(1);
	}

	private static boolean isPositive(Duration duration) {
		return duration != null && !duration.isNegative() && !duration.isZero();
	}

}
