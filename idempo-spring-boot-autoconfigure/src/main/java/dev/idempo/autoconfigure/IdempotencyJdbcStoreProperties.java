package dev.idempo.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the PostgreSQL and MySQL/MariaDB stores
 * ({@code idempo.store.jdbc.*}), apart from {@link IdempotencyProperties} as Spring Boot
 * keeps each concern's properties in a class of its own. Schema initialisation is in
 * {@link IdempotencyJdbcSchemaProperties}.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.store.jdbc")
public class IdempotencyJdbcStoreProperties {

	/**
	 * Name of the table that keeps completed responses, optionally qualified by a schema.
	 * Letters, digits and underscores only. Every instance must use the same table.
	 */
	private String tableName = "idempo_responses";

	/**
	 * Number of dedicated database sessions that hold the locks of in-flight requests,
	 * shared by all requests. They are opened on demand besides the application's
	 * connection pool, never taken from it.
	 */
	private int lockSessions = 4;

	/**
	 * Longest a store operation waits for a free lock session, the statement timeout of
	 * its SQL and the connect/login timeout of the connections idempo opens (whole
	 * seconds). Beyond it the request fails like any store failure
	 * (idempo.store-failure).
	 */
	private Duration timeout = Duration.ofSeconds(5);

	/**
	 * How long a lock session waits for its server to answer at all before it is given up
	 * as dead (a cut connection, a server that stopped answering), with the claims on it;
	 * also what bounds a request whose lock session stops answering. Unset: twice the
	 * timeout, at least 10s. Keep it above the longest stall you expect from the database
	 * (a commit waiting for its disk), since a session given up under a running handler
	 * loses its claim.
	 */
	private @Nullable Duration networkTimeout;

	/**
	 * How often idle lock sessions are checked. Claims on a session found dead are given
	 * up, so that their keys can be claimed again.
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

	/**
	 * Deletion of expired responses.
	 */
	public static class Cleanup {

		/**
		 * How often expired responses are deleted (by every instance).
		 */
		private Duration interval = Duration.ofMinutes(1);

		/**
		 * Most rows one delete statement removes. A cleanup repeats it while full batches
		 * come back.
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
		 * Start of every lock name the store takes with GET_LOCK (1 to 32 letters, digits
		 * or _.:/-). Lock names are global to the server; the rest of the name is a
		 * digest of the database name and the idempotency key.
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
