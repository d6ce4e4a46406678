package dev.idempo.store.jdbc;

import java.time.Duration;

import org.springframework.util.Assert;

/**
 * Settings shared by the PostgreSQL and MySQL/MariaDB stores.
 *
 * @param tableName the table of completed responses, optionally {@code schema.table}
 * @param lockSessions how many dedicated database sessions hold the locks of in-flight
 * requests
 * @param timeout the longest a claim waits for a lock session (a complete or release
 * twice as long), and the statement timeout of its SQL
 * @param sessionCheckInterval how often idle lock sessions are checked, so that claims on
 * a dead one are given up within about this long
 * @param cleanupInterval how often expired rows are deleted
 * @param cleanupBatchSize the most rows one {@code DELETE} removes
 * @param networkTimeout how long a lock session's connection waits for any answer before
 * its driver gives it up as dead, and its claims with it; {@code null} for twice the
 * timeout in whole seconds, at least 10 seconds
 * @param batching whether the operations of concurrent requests are combined into batches
 * (the default), rather than each run alone
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
		// a live statement may take the whole timeout
		Assert.isTrue(networkTimeout.compareTo(timeout) >= 0, "'networkTimeout' must not be shorter than 'timeout'");
		Assert.isTrue(networkTimeout.toMillis() <= Integer.MAX_VALUE,
				"'networkTimeout' must be at most " + Integer.MAX_VALUE + " ms (JDBC counts it in an int)");
		Assert.isTrue(isPositive(sessionCheckInterval), "'sessionCheckInterval' must be positive");
		Assert.isTrue(isPositive(cleanupInterval), "'cleanupInterval' must be positive");
		Assert.isTrue(cleanupBatchSize > 0, "'cleanupBatchSize' must be positive");
	}

	/** Settings with batching. */
	public JdbcStoreSettings(String tableName, int lockSessions, Duration timeout, Duration sessionCheckInterval,
			Duration cleanupInterval, int cleanupBatchSize, Duration networkTimeout) {
		this(tableName, lockSessions, timeout, sessionCheckInterval, cleanupInterval, cleanupBatchSize, networkTimeout,
				true);
	}

	/** Settings with batching and the default network timeout. */
	public JdbcStoreSettings(String tableName, int lockSessions, Duration timeout, Duration sessionCheckInterval,
			Duration cleanupInterval, int cleanupBatchSize) {
		this(tableName, lockSessions, timeout, sessionCheckInterval, cleanupInterval, cleanupBatchSize, null);
	}

	/**
	 * The defaults: table {@value #DEFAULT_TABLE_NAME}, 4 lock sessions, 5s timeout,
	 * sessions checked every 10s, cleanup every minute in batches of 500 rows.
	 */
	public static JdbcStoreSettings defaults() {
		return new JdbcStoreSettings(DEFAULT_TABLE_NAME, 4, Duration.ofSeconds(5), Duration.ofSeconds(10),
				Duration.ofMinutes(1), 500);
	}

	/** A copy with another table name. */
	public JdbcStoreSettings withTableName(String tableName) {
		return new JdbcStoreSettings(tableName, this.lockSessions, this.timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, this.networkTimeout, this.batching);
	}

	/** A copy with another number of lock sessions. */
	public JdbcStoreSettings withLockSessions(int lockSessions) {
		return new JdbcStoreSettings(this.tableName, lockSessions, this.timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, this.networkTimeout, this.batching);
	}

	/** A copy with another timeout (and a default network timeout following it). */
	public JdbcStoreSettings withTimeout(Duration timeout) {
		Duration network = this.networkTimeout.equals(defaultNetworkTimeout(this.timeout)) ? null : this.networkTimeout;
		return new JdbcStoreSettings(this.tableName, this.lockSessions, timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, network, this.batching);
	}

	/** A copy with another session check interval. */
	public JdbcStoreSettings withSessionCheckInterval(Duration sessionCheckInterval) {
		return new JdbcStoreSettings(this.tableName, this.lockSessions, this.timeout, sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, this.networkTimeout, this.batching);
	}

	/** A copy with another cleanup schedule. */
	public JdbcStoreSettings withCleanup(Duration cleanupInterval, int cleanupBatchSize) {
		return new JdbcStoreSettings(this.tableName, this.lockSessions, this.timeout, this.sessionCheckInterval,
				cleanupInterval, cleanupBatchSize, this.networkTimeout, this.batching);
	}

	/** A copy with another network timeout, {@code null} for the default. */
	public JdbcStoreSettings withNetworkTimeout(Duration networkTimeout) {
		return new JdbcStoreSettings(this.tableName, this.lockSessions, this.timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, networkTimeout, this.batching);
	}

	/** A copy with operations combined into batches or each run alone. */
	public JdbcStoreSettings withBatching(boolean batching) {
		return new JdbcStoreSettings(this.tableName, this.lockSessions, this.timeout, this.sessionCheckInterval,
				this.cleanupInterval, this.cleanupBatchSize, this.networkTimeout, batching);
	}

	/** The timeout in whole seconds, rounded up, as JDBC wants it. */
	int timeoutSeconds() {
		return (int) Math.max(1, (this.timeout.toMillis() + 999) / 1000);
	}

	/**
	 * Twice the timeout, at least 10 seconds: the server bounds most waits by the
	 * timeout, not all (a commit's flush, MySQL's writes, semi-synchronous replication),
	 * and a session given up too soon loses claims whose handlers still run.
	 */
	private static Duration defaultNetworkTimeout(Duration timeout) {
		long twice = 2L * Math.max(1, (timeout.toMillis() + 999) / 1000);
		return Duration.ofSeconds(Math.max(twice, MIN_DEFAULT_NETWORK_TIMEOUT.toSeconds()));
	}

	/** When the server ends an idle lock session: 4 check intervals, at least 1 min. */
	Duration sessionIdleTimeout() {
		Duration fourChecks = this.sessionCheckInterval.multipliedBy(4);
		return (fourChecks.compareTo(Duration.ofMinutes(1)) > 0) ? fourChecks : Duration.ofMinutes(1);
	}

	private static boolean isPositive(Duration duration) {
		return duration != null && !duration.isNegative() && !duration.isZero();
	}

}
