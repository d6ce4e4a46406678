package dev.idempo.web;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP forwarder on a loopback port of its own, in front of a real Redis, that records
 * every command a client sends through it (RESP arrays, as Lettuce and Jedis send them),
 * on every connection, in the order the forwarder read them. A command is recorded before
 * it is passed on, so a command whose reply the client has seen is always recorded.
 * <p>
 * Commands a script runs on the server are not sent by the client, and so not recorded:
 * what is recorded is what costs the client a round trip.
 *
 * @author idempo
 */
final class RedisCommandRecorder implements AutoCloseable {

	/** How much of an argument is kept: enough for a command name, a key or a SHA1. */
	private static final int KEPT_ARGUMENT_LENGTH = 120;

	private final ServerSocket server;

	private final String targetHost;

	private final int targetPort;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final List<Command> commands = new CopyOnWriteArrayList<>();

	private final AtomicInteger connections = new AtomicInteger();

	private RedisCommandRecorder(ServerSocket server, String targetHost, int targetPort) {
		this.server = server;
		this.targetHost = targetHost;
		this.targetPort = targetPort;
	}

	/**
	 * Starts forwarding a free loopback port to Redis.
	 * @param targetHost Redis's host
	 * @param targetPort Redis's port
	 * @return the running recorder
	 */
	static RedisCommandRecorder start(String targetHost, int targetPort) {
		try {
			ServerSocket server = new ServerSocket();
			server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
			RedisCommandRecorder recorder = new RedisCommandRecorder(server, targetHost, targetPort);
			daemon(recorder::accept, "redis-recorder-accept").start();
			return recorder;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	int port() {
		return this.server.getLocalPort();
	}

	/**
	 * The commands recorded since the last {@link #clear()}, on every connection.
	 * @return the commands, in the order they were read
	 */
	List<Command> commands() {
		return List.copyOf(this.commands);
	}

	/** Forgets the commands recorded so far. */
	void clear() {
		this.commands.clear();
	}

	/**
	 * How many connections clients have opened through the recorder so far.
	 * @return the count
	 */
	int connections() {
		return this.connections.get();
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				client.setTcpNoDelay(true);
				int connection = this.connections.incrementAndGet();
				Socket upstream = new Socket(this.targetHost, this.targetPort);
				upstream.setTcpNoDelay(true);
				this.sockets.add(client);
				this.sockets.add(upstream);
				daemon(() -> requests(connection, client, upstream), "redis-recorder-requests").start();
				daemon(() -> replies(upstream, client), "redis-recorder-replies").start();
			}
			catch (IOException ex) {
				// closed, or Redis refused: the client sees its connection end
			}
		}
	}

	/** Reads whole commands from the client, records each, then passes it on. */
	private void requests(int connection, Socket client, Socket upstream) {
		try (InputStream in = new BufferedInputStream(client.getInputStream());
				OutputStream out = upstream.getOutputStream()) {
			while (true) {
				ByteArrayOutputStream raw = new ByteArrayOutputStream();
				List<String> parts = readCommand(in, raw);
				if (parts == null) {
					return;
				}
				this.commands.add(new Command(connection, parts));
				raw.writeTo(out);
				if (in.available() == 0) {
					out.flush();
				}
			}
		}
		catch (IOException ex) {
			// one side closed
		}
		finally {
			closeQuietly(client);
			closeQuietly(upstream);
		}
	}

	private void replies(Socket upstream, Socket client) {
		byte[] buffer = new byte[16 * 1024];
		try (InputStream in = upstream.getInputStream(); OutputStream out = client.getOutputStream()) {
			int read;
			while ((read = in.read(buffer)) >= 0) {
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (IOException ex) {
			// one side closed
		}
		finally {
			closeQuietly(client);
			closeQuietly(upstream);
		}
	}

	/**
	 * Reads one RESP array of bulk strings ({@code *N} then {@code N} times
	 * {@code $len}), copying its bytes to {@code raw}; {@code null} at the end of the
	 * stream.
	 */
	private static List<String> readCommand(InputStream in, ByteArrayOutputStream raw) throws IOException {
		String header = readLine(in, raw);
		if (header == null) {
			return null;
		}
		if (!header.startsWith("*")) {
			// an inline command: one line of words
			return List.of(header.split(" "));
		}
		int count = Integer.parseInt(header.substring(1));
		List<String> parts = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			String length = readLine(in, raw);
			if (length == null || !length.startsWith("$")) {
				throw new IOException("Not a RESP bulk string: " + length);
			}
			byte[] value = in.readNBytes(Integer.parseInt(length.substring(1)) + 2);
			raw.write(value);
			int kept = Math.min(value.length - 2, KEPT_ARGUMENT_LENGTH);
			parts.add(new String(value, 0, Math.max(0, kept), StandardCharsets.UTF_8));
		}
		return parts;
	}

	private static String readLine(InputStream in, ByteArrayOutputStream raw) throws IOException {
		StringBuilder line = new StringBuilder();
		int previous = -1;
		while (true) {
			int next = in.read();
			if (next < 0) {
				if (line.isEmpty() && previous < 0) {
					return null;
				}
				throw new EOFException("The client closed in the middle of a command");
			}
			raw.write(next);
			if (previous == '\r' && next == '\n') {
				return line.substring(0, line.length() - 1);
			}
			line.append((char) next);
			previous = next;
		}
	}

	@Override
	public void close() {
		closeQuietly(this.server);
		this.sockets.forEach(RedisCommandRecorder::closeQuietly);
	}

	private static Thread daemon(Runnable task, String name) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		return thread;
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// closing anyway
		}
	}

	/**
	 * One command as a client sent it.
	 *
	 * @param connection which of the recorder's connections it came on, from 1
	 * @param parts the command's name and arguments, each cut to 120 characters
	 */
	record Command(int connection, List<String> parts) {

		String name() {
			return this.parts.get(0).toUpperCase(java.util.Locale.ROOT);
		}

		@Override
		public String toString() {
			return "#" + this.connection + " " + String.join(" ", this.parts);
		}

	}

}
