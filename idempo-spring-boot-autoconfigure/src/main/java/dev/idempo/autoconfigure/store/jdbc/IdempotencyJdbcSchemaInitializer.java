package dev.idempo.autoconfigure.store.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.autoconfigure.IdempotencyStoreStartupCheck;
import dev.idempo.store.jdbc.JdbcStoreSchema;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.boot.jdbc.init.PropertiesBasedDataSourceScriptDatabaseInitializer;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.Resource;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/**
 * Runs the schema script of the PostgreSQL or MySQL/MariaDB store
 * ({@code schema-postgresql.sql} or {@code schema-mysql.sql}, MariaDB using the MySQL
 * one) when {@code idempo.store.jdbc.initialize-schema} asks for it, adapted to the
 * configured table name.
 * <p>
 * If the database cannot be reached at start-up and {@code continue-on-error} is set (the
 * default), the application starts anyway: keyed requests answer 503 (the store cannot
 * reach its database either) and the script runs in the background, every half second at
 * first and then less often (at most every 30 seconds), until it has run once. This is
 * logged at INFO: the store's {@link IdempotencyStoreStartupCheck} logs the WARN line.
 *
 * @author idempo
 */
public class IdempotencyJdbcSchemaInitializer extends
		PropertiesBasedDataSourceScriptDatabaseInitializer<IdempotencyJdbcSchemaProperties> implements DisposableBean {

	private static final Log logger = LogFactory.getLog(IdempotencyJdbcSchemaInitializer.class);

	private static final long FIRST_RETRY_MILLIS = 500;

	private static final long MAX_RETRY_MILLIS = 30_000;

	private final String tableName;

	private final boolean continueOnError;

	private volatile @Nullable ScheduledExecutorService retries;

	private volatile boolean initialized;

	/**
	 * Creates an initializer.
	 * @param dataSource the data source the script runs on
	 * @param properties the initialisation properties
	 * @param tableName the configured table name
	 */
	public IdempotencyJdbcSchemaInitializer(DataSource dataSource, IdempotencyJdbcSchemaProperties properties,
			String tableName) {
		super(dataSource, properties, Map.of(DatabaseDriver.MARIADB, "mysql"));
		this.tableName = JdbcStoreSchema.checkTableName(tableName);
		this.continueOnError = properties.isContinueOnError();
	}

	@Override
	public void afterPropertiesSet() {
		try {
			initializeDatabase();
			this.initialized = true;
		}
		catch (RuntimeException ex) {
			if (!this.continueOnError || !isUnreachable(ex)) {
				throw ex;
			}
			// the store's start-up check logs the one WARN line, with the cause and
			// whether
			// it looks like an outage or a configuration error
			logger.info("idempo cannot reach its database to create the table " + this.tableName + " at start-up; "
					+ "starting anyway and creating it once the database answers: " + ex.getMessage());
			ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor((runnable) -> {
				Thread thread = new Thread(runnable, "idempo-schema");
				thread.setDaemon(true);
				return thread;
			});
			this.retries = retries;
			retries.schedule(() -> retry(FIRST_RETRY_MILLIS), FIRST_RETRY_MILLIS, TimeUnit.MILLISECONDS);
		}
	}

	/**
	 * Whether the schema has been created (or found), at start-up or later.
	 * @return whether initialized
	 */
	public boolean isInitialized() {
		return this.initialized;
	}

	private void retry(long delayMillis) {
		ScheduledExecutorService retries = this.retries;
		if (retries == null || retries.isShutdown()) {
			return;
		}
		try {
			initializeDatabase();
			this.initialized = true;
			logger.info("idempo's database answers again; the table " + this.tableName + " is ready");
			retries.shutdown();
		}
		catch (RuntimeException ex) {
			if (!isUnreachable(ex)) {
				logger.warn("idempo could not create its table " + this.tableName + "; giving up", ex);
				retries.shutdown();
				return;
			}
			long next = Math.min(delayMillis * 2, MAX_RETRY_MILLIS);
			if (logger.isDebugEnabled()) {
				logger.debug("idempo's database still cannot be reached; trying again in " + next + " ms", ex);
			}
			retries.schedule(() -> retry(next), next, TimeUnit.MILLISECONDS);
		}
	}

	@Override
	public void destroy() {
		ScheduledExecutorService retries = this.retries;
		if (retries != null) {
			retries.shutdownNow();
		}
	}

	/**
	 * Whether a failure means the database could not be reached (a connection that could
	 * not be opened or was lost), as opposed to a script that failed.
	 */
	static boolean isUnreachable(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof CannotGetJdbcConnectionException || cause instanceof SQLTransientConnectionException
					|| cause instanceof SQLNonTransientConnectionException || cause instanceof ConnectException) {
				return true;
			}
			if (cause instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	@Override
	protected void runScripts(Scripts scripts) {
		Charset encoding = (scripts.getEncoding() != null) ? scripts.getEncoding() : StandardCharsets.UTF_8;
		List<Resource> rendered = new ArrayList<>();
		for (Resource script : scripts) {
			try {
				String text = JdbcStoreSchema.render(script.getContentAsString(encoding), this.tableName);
				rendered.add(new ByteArrayResource(text.getBytes(encoding), script.getDescription()));
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not read " + script, ex);
			}
		}
		super.runScripts(new Scripts(rendered).continueOnError(scripts.isContinueOnError())
			.separator(scripts.getSeparator())
			.encoding(encoding));
	}

}
