package dev.idempo.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import ch.qos.logback.classic.Level;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

import dev.idempo.chaos.History.Execution;
import dev.idempo.chaos.History.Semantics;
import dev.idempo.store.jdbc.JdbcStoreSchema;

import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * A SQL server of the chaos test's own: idempo's table ({@value #RECORD_TABLE}, from the
 * shipped script) and the transactional endpoint's business table
 * ({@value #BUSINESS_TABLE}) live in it. Its data directory outlives a restart, so
 * records and rows do, while every session, and with it every lock, ends.
 *
 * @author idempo
 */
abstract class SqlChaosStore implements ChaosStore {

	static final String RECORD_TABLE = "chaos_records";

	static final String BUSINESS_TABLE = "chaos_payments";

	private @Nullable Path directory;

	/**
	 * {@code idempo.store.type}.
	 * @return the store type
	 */
	abstract String storeType();

	/**
	 * The platform of the shipped schema script.
	 * @return {@code postgresql} or {@code mysql}
	 */
	abstract String schemaPlatform();

	/**
	 * The business table's DDL: no unique key on the key, so that a second execution
	 * shows.
	 * @return the statement
	 */
	abstract String businessTableDdl();

	/**
	 * Starts the server for the first time in {@code directory}.
	 * @param directory its directory
	 * @throws Exception if it does not start
	 */
	abstract void startServer(Path directory) throws Exception;

	/**
	 * The JDBC URL of the server, with its credentials.
	 * @return the URL
	 */
	abstract String url();

	@Override
	public Semantics semantics() {
		return new Semantics(true, null);
	}

	@Override
	public boolean transactional() {
		return true;
	}

	@Override
	public final void start(Path directory) throws Exception {
		this.directory = directory;
		startServer(directory);
		ResourceDatabasePopulator populator = new ResourceDatabasePopulator(new ByteArrayResource(
				JdbcStoreSchema.script(schemaPlatform(), RECORD_TABLE).getBytes(StandardCharsets.UTF_8)));
		populator.execute(new DriverManagerDataSource(url()));
		jdbc().execute(businessTableDdl());
	}

	@Override
	public List<String> applicationArguments() {
		return List.of("--idempo.store.type=" + storeType(), "--idempo.store.jdbc.table-name=" + RECORD_TABLE,
				"--idempo.store.jdbc.initialize-schema=never",
				// generous: a stopped server fails statements at once, and a timeout
				// under a
				// busy machine's load would release keys without an injected fault
				"--idempo.store.jdbc.timeout=10s",
				// clears the test resources' exclusion of the DataSource
				"--spring.autoconfigure.exclude=", "--spring.datasource.url=" + url(),
				"--spring.datasource.hikari.maximum-pool-size=20", "--spring.datasource.hikari.connection-timeout=2000",
				"--spring.datasource.hikari.validation-timeout=1000",
				"--spring.datasource.hikari.initialization-fail-timeout=-1",
				"--chaos.business-table=" + BUSINESS_TABLE);
	}

	@Override
	public List<Execution> transactionalEffects() {
		return jdbc().query(
				"SELECT idem_key, execution, instance, status, headers, body FROM " + BUSINESS_TABLE + " ORDER BY id",
				(rs, row) -> new Execution(rs.getString(1), rs.getString(2), rs.getString(3), true, 0, 0, rs.getInt(4),
						headers(rs.getString(5)), rs.getString(6).getBytes(StandardCharsets.UTF_8), null));
	}

	JdbcTemplate jdbc() {
		return new JdbcTemplate(new DriverManagerDataSource(url()));
	}

	/** Deletes the server's files, once it has stopped. */
	void deleteFiles() {
		Path directory = this.directory;
		if (directory == null || !Files.exists(directory)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(directory)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(path);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static void quiet(String loggerName) {
		if (LoggerFactory.getLogger(loggerName) instanceof ch.qos.logback.classic.Logger logger) {
			logger.setLevel(Level.WARN);
		}
	}

	private static Map<String, String> headers(String text) {
		Map<String, String> headers = new LinkedHashMap<>();
		for (String line : text.split("\n")) {
			int colon = line.indexOf(": ");
			if (colon > 0) {
				headers.put(line.substring(0, colon), line.substring(colon + 2));
			}
		}
		return headers;
	}

}
