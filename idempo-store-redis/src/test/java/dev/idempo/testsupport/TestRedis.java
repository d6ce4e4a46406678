package dev.idempo.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import org.jspecify.annotations.Nullable;
import redis.embedded.RedisExecProvider;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * The real Redis server that tests run against, resolved once per test JVM:
 * <ol>
 * <li>the server at {@value #URL_VARIABLE} if that environment variable is set (a
 * {@code redis://} or {@code rediss://} URL; start-up fails if it does not answer
 * {@code PING});</li>
 * <li>else the local server at {@code 127.0.0.1:6379} if it answers {@code PING};</li>
 * <li>else an embedded Redis 7, started from the {@code org.signal:embedded-redis}
 * artifact on a free loopback port and stopped when the JVM exits.</li>
 * </ol>
 * {@value #MODE_VARIABLE} forces a mode: {@code external} allows only 1 and 2 and fails
 * if neither answers, {@code embedded} always starts an embedded server, {@code auto}
 * (the default) tries all three in order. A server that cannot be had is a test failure,
 * never a skipped test.
 * <p>
 * Other tests, other builds and people share servers 1 and 2: tests use random keys and
 * prefixes, and never flush or reconfigure a server.
 *
 * @author idempo
 */
public final class TestRedis {

	/** Environment variable with the URL of the Redis server tests use. */
	public static final String URL_VARIABLE = "IDEMPO_TEST_REDIS_URL";

	/** Environment variable that forces where test servers come from. */
	public static final String MODE_VARIABLE = TestServerMode.VARIABLE;

	private static final String LOCAL_URL = "redis://127.0.0.1:6379";

	private static final Duration PING_TIMEOUT = Duration.ofSeconds(2);

	private static final Supplier<Server> SERVER = TestServerMode.once(TestRedis::resolve);

	private TestRedis() {
	}

	/**
	 * The server tests run against, resolved on first use.
	 * @return the server
	 * @throws IllegalStateException if no server could be had, with the reason
	 */
	public static Server server() {
		return SERVER.get();
	}

	/**
	 * A loopback port nobody listens on right now.
	 * @return the port
	 */
	public static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The redis-server executable of the embedded artifact, extracted to a temporary file
	 * that is deleted when the JVM exits.
	 * @return the executable
	 */
	public static Path embeddedExecutable() {
		try {
			return RedisExecProvider.defaultProvider().get().toPath();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not extract redis-server from the embedded-redis artifact", ex);
		}
	}

	private static Server resolve() {
		TestServerMode mode = TestServerMode.current();
		if (mode != TestServerMode.EMBEDDED) {
			String url = System.getenv(URL_VARIABLE);
			if (url != null && !url.isBlank()) {
				String failure = ping(url);
				if (failure != null) {
					throw new IllegalStateException(
							URL_VARIABLE + " is set, but the server there does not answer PING: " + failure);
				}
				return announce(new Server(url, URL_VARIABLE + " (" + redacted(url) + ")", false));
			}
			String localFailure = ping(LOCAL_URL);
			if (localFailure == null) {
				return announce(new Server(LOCAL_URL, "the local server at 127.0.0.1:6379", false));
			}
			if (mode == TestServerMode.EXTERNAL) {
				throw new IllegalStateException(MODE_VARIABLE + "=external, but " + URL_VARIABLE
						+ " is not set and 127.0.0.1:6379 does not answer PING: " + localFailure);
			}
		}
		return announce(startEmbedded());
	}

	private static Server startEmbedded() {
		RuntimeException lastFailure = null;
		// a free port may be taken between probing and binding; try a few
		for (int attempt = 0; attempt < 3; attempt++) {
			int port = freePort();
			RedisServer server = RedisServer.builder()
				.bind("127.0.0.1")
				.port(port)
				.setting("save \"\"")
				.setting("appendonly no")
				.build();
			try {
				server.start();
			}
			catch (RuntimeException ex) {
				lastFailure = ex;
				continue;
			}
			// embedded-redis stops the server from a shutdown hook when the JVM exits
			String url = "redis://127.0.0.1:" + port;
			String failure = ping(url);
			if (failure != null) {
				server.stop();
				throw new IllegalStateException("The embedded Redis started but does not answer PING: " + failure);
			}
			return new Server(url, "an embedded Redis " + RedisExecProvider.redisVersion + " on 127.0.0.1:" + port,
					true);
		}
		throw new IllegalStateException("Could not start an embedded Redis from org.signal:embedded-redis",
				lastFailure);
	}

	private static Server announce(Server server) {
		System.out.println("[idempo tests] Redis: " + server.description());
		return server;
	}

	/**
	 * Sends one PING.
	 * @param url the server
	 * @return {@code null} if it answered PONG, else why not
	 */
	private static @Nullable String ping(String url) {
		RedisClient client;
		try {
			RedisURI uri = RedisURI.create(url);
			uri.setTimeout(PING_TIMEOUT);
			client = RedisClient.create(uri);
		}
		catch (RuntimeException ex) {
			return "not a Redis URL: " + ex.getMessage();
		}
		client.setOptions(ClientOptions.builder()
			.autoReconnect(false)
			.socketOptions(SocketOptions.builder().connectTimeout(PING_TIMEOUT).build())
			.build());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			String reply = connection.sync().ping();
			return "PONG".equals(reply) ? null : "answered " + reply;
		}
		catch (RuntimeException ex) {
			return ex.getClass().getSimpleName() + ": " + ex.getMessage();
		}
		finally {
			client.shutdown(Duration.ZERO, PING_TIMEOUT);
		}
	}

	private static String redacted(String url) {
		return url.replaceAll("//[^@/]*@", "//***@");
	}

	/**
	 * A running Redis server.
	 *
	 * @param url its URL, with credentials if it needs them
	 * @param description where it comes from, for people (no credentials)
	 * @param embedded whether this JVM started the server (tests may then change its
	 * global state)
	 */
	public record Server(String url, String description, boolean embedded) {

		/**
		 * A started connection factory for the server; the caller destroys it.
		 * @return the connection factory
		 */
		public LettuceConnectionFactory createConnectionFactory() {
			LettuceConnectionFactory factory = unstartedConnectionFactory();
			factory.afterPropertiesSet();
			factory.start();
			return factory;
		}

		/**
		 * The same server, in another of its logical databases: a test that counts its
		 * keys with {@code SCAN} reads only its own database's keyspace, however many
		 * keys other clients of a shared server keep in the default one.
		 * @param database the database's index
		 * @return the server, in that database
		 */
		public Server inDatabase(int database) {
			int authority = this.url.indexOf("://") + 3;
			int end = authority;
			while (end < this.url.length() && this.url.charAt(end) != '/' && this.url.charAt(end) != '?') {
				end++;
			}
			String url = this.url.substring(0, end) + "/" + database;
			return new Server(url, this.description + ", database " + database, this.embedded);
		}

		/**
		 * Deletes every key that starts with {@code prefix}, so that tests leave a shared
		 * server as they found it.
		 * @param prefix a key prefix without glob characters
		 */
		public void deleteKeys(String prefix) {
			if (!prefix.matches("[A-Za-z0-9:_-]+")) {
				throw new IllegalArgumentException("Not a plain key prefix: " + prefix);
			}
			LettuceConnectionFactory factory = createConnectionFactory();
			try (RedisConnection connection = factory.getConnection()) {
				deleteKeys(connection, prefix);
			}
			finally {
				factory.destroy();
			}
		}

		/**
		 * Deletes every key that starts with {@code prefix}, through {@code connection}.
		 * @param connection a connection to the server
		 * @param prefix a key prefix without glob characters
		 */
		public static void deleteKeys(RedisConnection connection, String prefix) {
			List<byte[]> keys = new ArrayList<>();
			try (Cursor<byte[]> cursor = connection.keyCommands()
				.scan(ScanOptions.scanOptions().match(prefix + "*").count(1000).build())) {
				cursor.forEachRemaining(keys::add);
			}
			if (!keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(byte[][]::new));
			}
		}

		/**
		 * A connection factory for the server that is yet to be initialized and started,
		 * such as for a bean.
		 * @return the connection factory
		 */
		public LettuceConnectionFactory unstartedConnectionFactory() {
			RedisURI uri = RedisURI.create(this.url);
			LettuceClientConfiguration.LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder()
				.commandTimeout(Duration.ofSeconds(10));
			if (uri.isSsl()) {
				client.useSsl();
			}
			return new LettuceConnectionFactory(LettuceConnectionFactory.createRedisConfiguration(uri), client.build());
		}

	}

}
