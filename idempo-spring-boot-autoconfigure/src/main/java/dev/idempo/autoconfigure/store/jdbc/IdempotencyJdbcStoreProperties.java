package dev.idempo.autoconfigure.store.jdbc;

import java.time.Duration;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.store.jdbc.JdbcStoreSchema;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of the PostgreSQL and MySQL/MariaDB stores
 * ({@code idempo.store.jdbc.*}), apart from {@link IdempotencyProperties} as Spring Boot
 * keeps each concern's properties in a class of its own. Schema initialisation is in
 * {@link IdempotencyJdbcSchemaProperties}. Checked when bound: a value out of range fails
 * start-up naming the property.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.store.jdbc")
public class IdempotencyJdbcStoreProperties implements Validator {

	/** The lock prefixes {@code MySqlDialect} accepts. */
	private static final Pattern LOCK_PREFIX = Pattern.compile("[A-Za-z0-9_.:/-]{1,32}");

	/**
	 * The longest timeout: its default network timeout, twice as long, must fit in the
	 * int milliseconds of JDBC's network timeout and PostgreSQL's statement_timeout.
	 */
	private static final Duration MAX_TIMEOUT = Duration.ofDays(12);

	/** The longest network timeout: JDBC counts it in int milliseconds. */
	private static final Duration MAX_NETWORK_TIMEOUT = Duration.ofDays(24);

	/**
	 * The longest session check interval: four of them, the idle timeout of a lock
	 * session, must fit in PostgreSQL's int milliseconds of idle_session_timeout.
	 */
	private static final Duration MAX_SESSION_CHECK_INTERVAL = Duration.ofDays(6);

	/**
	 * Name of the table that keeps completed responses, optionally qualified by a schema.
	 * Letters, digits and underscores only, at most 48 characters (the schema at most
	 * 63). Every instance must use the same table.
	 */
	private String tableName = "idempo_responses";

	/**
	 * Number of dedicated database sessions that hold the locks of in-flight requests,
	 * shared by all requests. They are opened on demand besides the application's
	 * connection pool, never taken from it. At least 1.
	 */
	private int lockSessions = 4;

	/**
	 * Longest a store operation waits for a free lock session, the statement timeout of
	 * its SQL and the connect/login timeout of the connections idempo opens (whole
	 * seconds). Beyond it the request fails like any store failure
	 * (idempo.store-failure). Positive, at most 12d.
	 */
	private Duration timeout = Duration.ofSeconds(5);

	/**
	 * How long a lock session waits for its server to answer at all before it is given up
	 * as dead (a cut connection, a server that stopped answering), with the claims on it;
	 * also what bounds a request whose lock session stops answering. Unset: twice the
	 * timeout, at least 10s. Keep it above the longest stall you expect from the database
	 * (a commit waiting for its disk), since a session given up under a running handler
	 * loses its claim. At least 1s and the timeout, at most 24d.
	 */
	private @Nullable Duration networkTimeout;

	/**
	 * How often idle lock sessions are checked. Claims on a session found dead are given
	 * up, so that their keys can be claimed again. Positive, at most 6d.
	 */
	private Duration sessionCheckInterval = Duration.ofSeconds(10);

	/**
	 * Whether the store operations of concurrent requests are combined into batches, one
	 * round trip and one commit per lock session. When false, each operation runs alone,
	 * one statement per round trip: simpler and slower under load, with the same
	 * outcomes.
	 */
	private boolean batching = true;

	private final Cleanup cleanup = new Cleanup();

	private final Postgres postgres = new Postgres();

	private final Mysql mysql = new Mysql();

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public int getLockSessions() {
		return this.lockSessions;
	}

	public void setLockSessions(int lockSessions) {
		this.lockSessions = lockSessions;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public @Nullable Duration getNetworkTimeout() {
		return this.networkTimeout;
	}

	public boolean isBatching() {
		return this.batching;
	}

	public void setBatching(boolean batching) {
		this.batching = batching;
	}

	public void setNetworkTimeout(@Nullable Duration networkTimeout) {
		this.networkTimeout = networkTimeout;
	}

	public Duration getSessionCheckInterval() {
		return this.sessionCheckInterval;
	}

	public void setSessionCheckInterval(Duration sessionCheckInterval) {
		this.sessionCheckInterval = sessionCheckInterval;
	}

	public Cleanup getCleanup() {
		return this.cleanup;
	}

	public Postgres getPostgres() {
		return this.postgres;
	}

	public Mysql getMysql() {
		return this.mysql;
	}

	@Override
	public boolean supports(Class<?> type) {
		return IdempotencyJdbcStoreProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		IdempotencyJdbcStoreProperties properties = (IdempotencyJdbcStoreProperties) target;
		try {
			JdbcStoreSchema.checkTableName(properties.getTableName());
		}
		catch (IllegalArgumentException ex) {
			errors.rejectValue("tableName", "idempo.store.jdbc.table-name", ex.getMessage());
		}
		if (properties.getLockSessions() < 1) {
			errors.rejectValue("lockSessions", "idempo.store.jdbc.lock-sessions", "must be at least 1");
		}
		rejectOutOfRange(errors, "timeout", "idempo.store.jdbc.timeout", properties.getTimeout(), MAX_TIMEOUT);
		validateNetworkTimeout(properties, errors);
		rejectOutOfRange(errors, "sessionCheckInterval", "idempo.store.jdbc.session-check-interval",
				properties.getSessionCheckInterval(), MAX_SESSION_CHECK_INTERVAL);
		rejectNonPositive(errors, "cleanup.interval", "idempo.store.jdbc.cleanup.interval",
				properties.getCleanup().getInterval());
		if (properties.getCleanup().getBatchSize() < 1) {
			errors.rejectValue("cleanup.batchSize", "idempo.store.jdbc.cleanup.batch-size", "must be at least 1");
		}
		if (!LOCK_PREFIX.matcher(properties.getMysql().getLockPrefix()).matches()) {
			errors.rejectValue("mysql.lockPrefix", "idempo.store.jdbc.mysql.lock-prefix",
					"must be 1 to 32 letters, digits or _.:/-");
		}
	}

	private static void validateNetworkTimeout(IdempotencyJdbcStoreProperties properties, Errors errors) {
		Duration networkTimeout = properties.getNetworkTimeout();
		if (networkTimeout == null) {
			return;
		}
		if (networkTimeout.compareTo(Duration.ofSeconds(1)) < 0 || networkTimeout.compareTo(MAX_NETWORK_TIMEOUT) > 0) {
			errors.rejectValue("networkTimeout", "idempo.store.jdbc.network-timeout",
					"must be at least 1s and at most 24d");
		}
		else if (networkTimeout.compareTo(properties.getTimeout()) < 0) {
			// a live statement may take the whole timeout
			errors.rejectValue("networkTimeout", "idempo.store.jdbc.network-timeout",
					"must not be shorter than idempo.store.jdbc.timeout (" + properties.getTimeout() + ")");
		}
	}

	private static void rejectNonPositive(Errors errors, String field, String property, Duration duration) {
		if (duration.isNegative() || duration.isZero()) {
			errors.rejectValue(field, property, "must be positive");
		}
	}

	private static void rejectOutOfRange(Errors errors, String field, String property, Duration duration,
			Duration max) {
		if (duration.isNegative() || duration.isZero() || duration.compareTo(max) > 0) {
			errors.rejectValue(field, property, "must be positive and at most " + max.toDays() + "d");
		}
	}

	/**
	 * Deletion of expired responses.
	 */
	public static class Cleanup {

		/**
		 * How often expired responses are deleted (by every instance). Positive.
		 */
		private Duration interval = Duration.ofMinutes(1);

		/**
		 * Most rows one delete statement removes. A cleanup repeats it while full batches
		 * come back. At least 1.
		 */
		private int batchSize = 500;

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

	}

	/**
	 * PostgreSQL store settings.
	 */
	public static class Postgres {

		/**
		 * First key of every advisory lock the store takes with pg_try_advisory_lock(int,
		 * int); the second is derived from the idempotency key. Two-key locks never
		 * collide with bigint advisory locks; change this only if the application uses
		 * two-key locks with this first key. The default spells "idmp" in ASCII.
		 */
		private int lockNamespace = 1768189296;

		public int getLockNamespace() {
			return this.lockNamespace;
		}

		public void setLockNamespace(int lockNamespace) {
			this.lockNamespace = lockNamespace;
		}

	}

	/**
	 * MySQL and MariaDB store settings.
	 */
	public static class Mysql {

		/**
		 * Start of every lock name the store takes with GET_LOCK: 1 to 32 letters, digits
		 * or _.:/-. Lock names are global to the server; the rest of the name is a digest
		 * of the database name and the idempotency key.
		 */
		private String lockPrefix = "idempo:";

		public String getLockPrefix() {
			return this.lockPrefix;
		}

		public void setLockPrefix(String lockPrefix) {
			this.lockPrefix = lockPrefix;
		}

	}

}
