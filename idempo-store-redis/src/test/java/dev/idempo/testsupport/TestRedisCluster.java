package dev.idempo.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A real Redis Cluster of masters without replicas on free loopback ports, for one test
 * class: {@link #start} starts one {@code redis-server} process per master in cluster
 * mode, each in its own temporary directory, spreads the 16384 slots evenly, joins the
 * nodes with {@code CLUSTER MEET} and waits until every node reports
 * {@code cluster_state:ok}. {@link #close} stops the processes and deletes the
 * directories.
 * <p>
 * The executable is {@code redis-server} from the {@code PATH} (such as
 * {@code /usr/bin/redis-server}), or the one in the {@code org.signal:embedded-redis}
 * artifact if there is none or {@code IDEMPO_TEST_SERVERS=embedded}. Anything that keeps
 * the cluster from starting throws with the reason and the servers' logs.
 *
 * @author idempo
 */
public final class TestRedisCluster implements AutoCloseable {

	private static final int SLOTS = 16384;

	/** The cluster bus of a node listens on its port plus this. */
	private static final int BUS_PORT_OFFSET = 10000;

	private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

	private final Path executable;

	private final List<Node> nodes = new ArrayList<>();

	private final Thread killOnExit = new Thread(this::kill, "redis-cluster-kill");

	private TestRedisCluster(Path executable) {
		this.executable = executable;
	}

	/**
	 * Starts a cluster and waits until it serves every slot.
	 * @param masters how many masters
	 * @return the running cluster
	 * @throws IllegalStateException if it does not start, with the reason
	 */
	public static TestRedisCluster start(int masters) {
		TestRedisCluster cluster = new TestRedisCluster(executable());
		Runtime.getRuntime().addShutdownHook(cluster.killOnExit);
		try {
			cluster.startNodes(masters);
			cluster.assignSlotsAndMeet();
			cluster.awaitStateOk();
			return cluster;
		}
		catch (RuntimeException | Error ex) {
			String logs = cluster.logs();
			cluster.close();
			throw new IllegalStateException("Could not start a Redis Cluster of " + masters + " masters with "
					+ cluster.executable + ": " + ex.getMessage() + logs, ex);
		}
	}

	/**
	 * The seed nodes, for a cluster-aware client.
	 * @return {@code host:port} of every node
	 */
	public List<String> nodeAddresses() {
		return this.nodes.stream().map((node) -> "127.0.0.1:" + node.port()).toList();
	}

	/**
	 * A started connection factory for the cluster; the caller destroys it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory createConnectionFactory() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(nodeAddresses()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Synchronous commands on each node itself (not cluster-aware), in node order.
	 * @return the commands of every node
	 */
	public List<RedisCommands<String, String>> nodeCommands() {
		return this.nodes.stream().map(Node::commands).toList();
	}

	/**
	 * Describes the executable in use.
	 * @return the path of {@code redis-server}
	 */
	public Path executablePath() {
		return this.executable;
	}

	@Override
	public void close() {
		for (Node node : this.nodes) {
			node.disconnect();
		}
		for (Node node : this.nodes) {
			node.process().destroy();
		}
		for (Node node : this.nodes) {
			RedisProcesses.stop(node.process());
			RedisProcesses.deleteRecursively(node.directory());
		}
		this.nodes.clear();
		try {
			Runtime.getRuntime().removeShutdownHook(this.killOnExit);
		}
		catch (IllegalStateException ex) {
			// the JVM is already shutting down, and the hook with it
		}
	}

	private void kill() {
		this.nodes.forEach((node) -> node.process().destroyForcibly());
	}

	/**
	 * The redis-server executable tests start servers with: the one on the {@code PATH},
	 * or the embedded artifact's.
	 */
	static Path executable() {
		if (TestServerMode.current() != TestServerMode.EMBEDDED) {
			String path = System.getenv("PATH");
			if (path != null) {
				for (String directory : path.split(File.pathSeparator)) {
					Path candidate = Path.of(directory, "redis-server");
					if (Files.isExecutable(candidate)) {
						return candidate;
					}
				}
			}
		}
		return TestRedis.embeddedExecutable();
	}

	private void startNodes(int masters) {
		for (int i = 0; i < masters; i++) {
			int port = freePortWithFreeBusPort();
			Path directory = RedisProcesses.temporaryDirectory("idempo-redis-cluster-");
			Path log = directory.resolve("redis.log");
			ProcessBuilder builder = new ProcessBuilder(this.executable.toString(), "--port", Integer.toString(port),
					"--bind", "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
					"--cluster-node-timeout", "5000", "--dir", directory.toString(), "--save", "", "--appendonly", "no",
					"--daemonize", "no")
				.directory(directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(log.toFile());
			Process process;
			try {
				process = builder.start();
			}
			catch (IOException ex) {
				RedisProcesses.deleteRecursively(directory);
				throw new UncheckedIOException("Could not run " + this.executable, ex);
			}
			Node node = new Node(port, directory, log, process);
			this.nodes.add(node);
			RedisProcesses.await("node on port " + port + " to answer PING", START_TIMEOUT, () -> {
				if (!process.isAlive()) {
					throw new IllegalStateException("redis-server on port " + port + " exited with "
							+ process.exitValue() + " (its log follows)");
				}
				return node.ping();
			});
		}
	}

	private void assignSlotsAndMeet() {
		int count = this.nodes.size();
		for (int i = 0; i < count; i++) {
			int from = i * SLOTS / count;
			int to = (i + 1) * SLOTS / count;
			String reply = this.nodes.get(i).commands().clusterAddSlots(IntStream.range(from, to).toArray());
			if (!"OK".equals(reply)) {
				throw new IllegalStateException("CLUSTER ADDSLOTS " + from + ".." + (to - 1) + " answered " + reply);
			}
		}
		RedisCommands<String, String> first = this.nodes.get(0).commands();
		for (Node other : this.nodes.subList(1, count)) {
			String reply = first.clusterMeet("127.0.0.1", other.port());
			if (!"OK".equals(reply)) {
				throw new IllegalStateException("CLUSTER MEET 127.0.0.1 " + other.port() + " answered " + reply);
			}
		}
	}

	private void awaitStateOk() {
		String expectedNodes = "cluster_known_nodes:" + this.nodes.size();
		RedisProcesses.await("every node to report cluster_state:ok with " + this.nodes.size() + " known nodes",
				START_TIMEOUT,
				() -> this.nodes.stream()
					.map((node) -> node.commands().clusterInfo())
					.allMatch((info) -> info.contains("cluster_state:ok") && info.contains(expectedNodes)
							&& info.contains("cluster_slots_ok:" + SLOTS)));
	}

	private String logs() {
		StringBuilder logs = new StringBuilder();
		for (Node node : this.nodes) {
			logs.append("\n--- redis-server on port ").append(node.port()).append(" ---\n");
			try {
				List<String> lines = Files.readAllLines(node.log(), StandardCharsets.UTF_8);
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
	 * A port that is free, and whose cluster bus port (plus 10000) is free too. Both stay
	 * below Linux's ephemeral range (32768 up), whose ports any outgoing connection may
	 * take.
	 */
	private static int freePortWithFreeBusPort() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(20000, 22768);
			if (isFree(port) && isFree(port + BUS_PORT_OFFSET)) {
				return port;
			}
		}
		throw new IllegalStateException("Found no free port pair (port, port + 10000) in 20000..32767");
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static final class Node {

		private final int port;

		private final Path directory;

		private final Path log;

		private final Process process;

		private @Nullable RedisClient client;

		private @Nullable StatefulRedisConnection<String, String> connection;

		Node(int port, Path directory, Path log, Process process) {
			this.port = port;
			this.directory = directory;
			this.log = log;
			this.process = process;
		}

		int port() {
			return this.port;
		}

		Path directory() {
			return this.directory;
		}

		Path log() {
			return this.log;
		}

		Process process() {
			return this.process;
		}

		boolean ping() {
			return "PONG".equals(commands().ping());
		}

		synchronized RedisCommands<String, String> commands() {
			if (this.connection == null) {
				RedisURI uri = RedisURI.create("127.0.0.1", this.port);
				uri.setTimeout(Duration.ofSeconds(5));
				RedisClient client = RedisClient.create(uri);
				client.setOptions(ClientOptions.builder()
					.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).build())
					.build());
				try {
					this.connection = client.connect();
				}
				catch (RuntimeException ex) {
					client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
					throw ex;
				}
				this.client = client;
			}
			return this.connection.sync();
		}

		synchronized void disconnect() {
			if (this.connection != null && this.client != null) {
				this.connection.close();
				this.client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
				this.connection = null;
				this.client = null;
			}
		}

	}

}
