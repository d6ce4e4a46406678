package dev.idempo.autoconfigure;

import java.sql.SQLException;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Why a store could not be reached: an outage, which ends when the store answers again
 * (connection refused, a timeout, a server restarting), or a configuration error that
 * will not go away by itself (wrong credentials, a database that does not exist, a Redis
 * database index the server does not have). Told apart from what the server answered: the
 * SQLState and vendor code of an {@link SQLException}, the error reply of Redis.
 *
 * @param permanent whether it is a configuration error rather than an outage
 * @param cause the message of the failure that decided, or of the innermost one
 * @param check what to check, for a configuration error; empty for an outage
 * @author idempo
 */
record StoreConnectionFailure(boolean permanent, String cause, String check) {

	/** MySQL and MariaDB: access denied for a user (SQLState 28000). */
	private static final int ACCESS_DENIED = 1045;

	/** MySQL and MariaDB: access denied for a user to a database (SQLState 42000). */
	private static final int DATABASE_ACCESS_DENIED = 1044;

	/** MySQL and MariaDB: unknown database (SQLState 42000). */
	private static final int UNKNOWN_DATABASE = 1049;

	/** MySQL and MariaDB: the table does not exist (SQLState 42S02). */
	private static final int NO_SUCH_TABLE = 1146;

	/**
	 * Classifies a failure to reach a store, looking through its causes.
	 * @param failure what reaching the store threw
	 * @return the classification
	 */
	static StoreConnectionFailure classify(Throwable failure) {
		Throwable innermost = failure;
		for (Throwable cause = failure; cause != null; cause = next(cause)) {
			String check = (cause instanceof SQLException sql) ? checkSql(sql) : checkRedis(cause.getMessage());
			if (check != null) {
				return new StoreConnectionFailure(true, String.valueOf(cause.getMessage()), check);
			}
			innermost = cause;
		}
		return new StoreConnectionFailure(false, describe(innermost), "");
	}

	private static @Nullable String checkSql(SQLException failure) {
		String state = (failure.getSQLState() != null) ? failure.getSQLState() : "";
		int code = failure.getErrorCode();
		if (state.startsWith("28") || code == ACCESS_DENIED) {
			return "the user name and password the store connects with (spring.datasource.username and "
					+ "spring.datasource.password, or those of the idempotencyDataSource bean)";
		}
		if (state.equals("3D000") || code == UNKNOWN_DATABASE) {
			return "that the database named in the URL exists (spring.datasource.url, or the URL of the "
					+ "idempotencyDataSource bean)";
		}
		if (state.startsWith("42501") || code == DATABASE_ACCESS_DENIED) {
			return "that the user may use the database named in the URL";
		}
		if (state.equals("42P01") || state.equals("42S02") || code == NO_SUCH_TABLE) {
			return "that the table idempo.store.jdbc.table-name exists (idempo.store.jdbc.initialize-schema=always "
					+ "creates it, or run the shipped schema script)";
		}
		return null;
	}

	private static @Nullable String checkRedis(@Nullable String reply) {
		if (reply == null) {
			return null;
		}
		String upper = reply.toUpperCase(Locale.ROOT);
		if (upper.contains("WRONGPASS")) {
			return "the Redis user name and password (spring.data.redis.username and spring.data.redis.password)";
		}
		if (upper.contains("NOAUTH")) {
			return "the Redis password: the server requires one and none was sent (spring.data.redis.password)";
		}
		if (upper.contains("ERR AUTH") && upper.contains("WITHOUT ANY PASSWORD CONFIGURED")) {
			return "the Redis password: one was sent and the server has none (remove spring.data.redis.password)";
		}
		if (upper.contains("ERR INVALID DB INDEX") || upper.contains("ERR DB INDEX IS OUT OF RANGE")) {
			return "the Redis database index: the server has fewer databases (spring.data.redis.database)";
		}
		return null;
	}

	private static @Nullable Throwable next(Throwable failure) {
		Throwable cause = failure.getCause();
		return (cause != failure) ? cause : null;
	}

	private static String describe(Throwable failure) {
		String message = failure.getMessage();
		return (message != null) ? failure.getClass().getSimpleName() + ": " + message
				: failure.getClass().getSimpleName();
	}

	/**
	 * The one line logged at start-up for this failure.
	 * @param store the store type, such as {@code postgres}
	 * @param address where the store connects, without credentials
	 * @param failOpen whether requests run unprotected while the store cannot be reached
	 * @return the line
	 */
	String startupMessage(String store, String address, boolean failOpen) {
		String head = "idempo's " + store + " store at " + address + " cannot be reached at start-up (" + this.cause
				+ "); ";
		if (this.permanent) {
			return head + "this looks like a configuration error that will not go away by itself: check " + this.check;
		}
		return head + "the store is unreachable now; requests "
				+ (failOpen ? "run unprotected (idempo.store-failure.mode=fail-open)" : "get 503")
				+ " until it answers";
	}

}
