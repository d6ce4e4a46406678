package dev.idempo.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;

/**
 * A primary, one replica and one Sentinel watching them, as {@code redis-server}
 * processes of the test's own on free loopback ports, in temporary directories (never the
 * shared server). The replica authenticates to the primary as a user of its own, so that
 * a test can make it lag: {@link #partitionReplication()} disables that user and drops
 * the replica's link, the replica cannot reconnect, and what the primary acknowledges
 * from then on is not on the replica, as with a replica cut off from its primary. The
 * Sentinel has a quorum of 1 and declares the primary down after
 * {@value #DOWN_AFTER_MILLIS} ms, so {@link #killPrimary()} leads to the replica's
 * promotion within seconds.
 * <p>
 * The executable is the one {@link TestRedisCluster} uses. {@link #close} stops the
 * processes and deletes the directories.
 *
 * @author idempo
 */
public final class TestRedisSentinel implements AutoCloseable {

	/** The name the Sentinel monitors the primary under. */
	public static final String MASTER_NAME = "idempo";

	private static final int DOWN_AFTER_MILLIS = 1000;

	private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

	private final Path executable = TestRedisCluster.executable();

	private final List<Server> servers = new ArrayList<>();

	private final Thread killOnExit = new Thread(this::kill, "redis-sentinel-kill");

	/** The user the replica replicates as, and its password. */
	private static final String REPLICATION_USER = "replication";

	private static final String REPLICATION_PASSWORD = "idempo-replication";

	private Server primary;

	private Server replica;

	private Server sentinel;

	private final int sentinelPort = TestRedis.freePort();

	private TestRedisSentinel() {
	}

	/**
	 * Starts the primary, the replica behind its link, and the Sentinel, and waits until
	 * the replica is in sync and the Sentinel knows it.
	 * @return the running servers
	 * @throws IllegalStateException if they do not start, with the reason and the logs
	 */
	public static TestRedisSentinel start() {
		TestRedisSentinel group = new TestRedisSentinel();
		Runtime.getRuntime().addShutdownHook(group.killOnExit);
		try {
			group.primary = group.startServer("primary",
					List.of("--user", REPLICATION_USER, "on", ">" + REPLICATION_PASSWORD, "~*", "&*", "+@all"));
			group.replica = group.startServer("replica",
					List.of("--replicaof", "127.0.0.1", Integer.toString(group.primary.port()), "--masteruser",
							REPLICATION_USER, "--masterauth", REPLICATION_PASSWORD));
			RedisProcesses.await("the replica to be in sync", START_TIMEOUT,
					() -> group.replica.info("replication").contains("master_link_status:up"));
			return group;
		}
		catch (RuntimeException | Error ex) {
			String logs = group.logs();
			group.close();
			throw new IllegalStateException("Could not start a Redis primary and replica with " + group.executable
					+ ": " + ex.getMessage() + logs, ex);
		}
	}

	/**
	 * The Sentinel's address, for {@code spring.data.redis.sentinel.nodes}; it answers
	 * once {@link #startSentinel()} has run.
	 * @return {@code host:port}
	 */
	public String sentinelAddress() {
		return "127.0.0.1:" + this.sentinelPort;
	}

	/**
	 * Starts the Sentinel and waits until it knows the replica.
	 */
	public void startSentinel() {
		try {
			this.sentinel = startSentinelProcess();
			RedisProcesses.await("the Sentinel to know the replica", START_TIMEOUT,
					() -> sentinelCommands((sentinel) -> !sentinel.sync().replicas(MASTER_NAME).isEmpty()));
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException("Could not start the Sentinel: " + ex.getMessage() + logs(), ex);
		}
	}

	/**
	 * The port of the server started as the replica.
	 * @return the port
	 */
	public int replicaPort() {
		return this.replica.port();
	}

	/**
	 * The port of the primary as the Sentinel names it now.
	 * @return the port
	 */
	public int currentPrimaryPort() {
		return sentinelCommands(
				(sentinel) -> ((InetSocketAddress) sentinel.sync().getMasterAddrByName(MASTER_NAME)).getPort());
	}

	/**
	 * Cuts the replica off from now on: the primary disables the replica's user and
	 * closes its connection, so the replica cannot reconnect and lags ever further
	 * behind. Returns once the replica says its link is down.
	 */
	public void partitionReplication() {
		this.primary.withConnection((connection) -> {
			connection.sync().aclSetuser(REPLICATION_USER, AclSetuserArgs.Builder.off());
			return connection.sync().clientKill(KillArgs.Builder.typeSlave());
		});
		RedisProcesses.await("the replica's link to go down", START_TIMEOUT,
				() -> this.replica.info("replication").contains("master_link_status:down"));
	}

	/**
	 * Kills the primary at once ({@code SIGKILL}): what the replica did not have is gone.
	 */
	public void killPrimary() {
		this.primary.process().destroyForcibly();
		try {
			this.primary.process().waitFor(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Waits until the Sentinel has promoted the replica and the replica says it is a
	 * primary.
	 * @param timeout how long at most
	 */
	public void awaitReplicaPromoted(Duration timeout) {
		RedisProcesses.await("the Sentinel to promote the replica", timeout,
				() -> currentPrimaryPort() == this.replica.port()
						&& this.replica.info("replication").contains("role:master"));
	}

	@Override
	public void close() {
		for (Server server : this.servers) {
			server.process().destroy();
		}
		for (Server server : this.servers) {
			RedisProcesses.stop(server.process());
			RedisProcesses.deleteRecursively(server.directory());
		}
		this.servers.clear();
		try {
			Runtime.getRuntime().removeShutdownHook(this.killOnExit);
		}
		catch (IllegalStateException ex) {
			// the JVM is already shutting down, and the hook with it
		}
	}

	private void kill() {
		this.servers.forEach((server) -> server.process().destroyForcibly());
	}

	private Server startServer(String name, List<String> extraArguments) {
		int port = TestRedis.freePort();
		Path directory = RedisProcesses.temporaryDirectory("idempo-redis-sentinel-");
		List<String> command = new ArrayList<>(
				List.of(this.executable.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir",
						directory.toString(), "--save", "", "--appendonly", "no", "--daemonize", "no"));
		command.addAll(extraArguments);
		return launch(name, port, directory, command);
	}

	private Server startSentinelProcess() {
		int port = this.sentinelPort;
		Path directory = RedisProcesses.temporaryDirectory("idempo-redis-sentinel-");
		Path configuration = directory.resolve("sentinel.conf");
		String text = String.join("\n", "port " + port, "bind 127.0.0.1", "dir " + directory,
				"sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + this.primary.port() + " 1",
				"sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER_MILLIS,
				"sentinel failover-timeout " + MASTER_NAME + " 10000", "");
		try {
			Files.writeString(configuration, text, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return launch("sentinel", port, directory,
				List.of(this.executable.toString(), configuration.toString(), "--sentinel"));
	}

	private Server launch(String name, int port, Path directory, List<String> command) {
		Path log = directory.resolve(name + ".log");
		Process process;
		try {
			process = new ProcessBuilder(command).directory(directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
		}
		catch (IOException ex) {
			RedisProcesses.deleteRecursively(directory);
			throw new UncheckedIOException("Could not run " + this.executable, ex);
		}
		Server server = new Server(name, port, directory, log, process);
		this.servers.add(server);
		RedisProcesses.await(name + " on port " + port + " to answer PING", START_TIMEOUT, () -> {
			if (!process.isAlive()) {
				throw new IllegalStateException(
						name + " on port " + port + " exited with " + process.exitValue() + " (its log follows)");
			}
			return "PONG".equals(server.ping());
		});
		return server;
	}

	private <T> T sentinelCommands(Function<StatefulRedisSentinelConnection<String, String>, T> use) {
		RedisClient client = client(this.sentinel.port());
		try (StatefulRedisSentinelConnection<String, String> connection = client.connectSentinel()) {
			return use.apply(connection);
		}
		finally {
			client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
		}
	}

	private String logs() {
		StringBuilder logs = new StringBuilder();
		for (Server server : this.servers) {
			logs.append("\n--- ").append(server.name()).append(" on port ").append(server.port()).append(" ---\n");
			try {
				List<String> lines = Files.readAllLines(server.log(), StandardCharsets.UTF_8);
				lines.subList(Math.max(0, lines.size() - 30), lines.size())
					.forEach((line) -> logs.append(line).append('\n'));
			}
			catch (IOException ex) {
				logs.append("(no log: ").append(ex.getMessage()).append(")\n");
			}
		}
		return logs.toString();
	}

	/**
	 * The last lines of every server's log, for a failure message.
	 * @return the logs
	 */
	public String describe() {
		return logs();
	}

	private static RedisClient client(int port) {
		RedisURI uri = RedisURI.create("127.0.0.1", port);
		uri.setTimeout(Duration.ofSeconds(5));
		RedisClient client = RedisClient.create(uri);
		client.setOptions(ClientOptions.builder()
			.autoReconnect(false)
			.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).build())
			.build());
		return client;
	}

	private record Server(String name, int port, Path directory, Path log, Process process) {

		String ping() {
			return withConnection((connection) -> connection.sync().ping());
		}

		String info(String section) {
			return withConnection((connection) -> connection.sync().info(section));
		}

		private <T> T withConnection(Function<StatefulRedisConnection<String, String>, T> use) {
			RedisClient client = client(this.port);
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				return use.apply(connection);
			}
			finally {
				client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
			}
		}

	}

}
