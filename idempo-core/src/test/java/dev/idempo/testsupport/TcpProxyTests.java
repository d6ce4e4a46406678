package dev.idempo.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link TcpProxy} does to a connection what its mode says, proven against a local echo
 * server that counts the bytes it receives: forwarding passes bytes both ways, latency
 * delays each direction, a black hole holds bytes without closing anything and lets them
 * through once healed, reset-on-reply lets a request reach the server and resets the
 * connection at its reply, and {@link TcpProxy#resetAll()} resets open connections while
 * new ones still work.
 *
 * @author idempo
 */
class TcpProxyTests {

	private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

	private EchoServer echo;

	private TcpProxy proxy;

	@BeforeEach
	void start() throws IOException {
		this.echo = new EchoServer();
		this.proxy = TcpProxy.start(0, "127.0.0.1", this.echo.port());
	}

	@AfterEach
	void stop() {
		this.proxy.close();
		this.echo.close();
	}

	@Test
	void forwardPassesBytesBothWays() throws IOException {
		try (Socket client = connect()) {
			assertThat(roundTrip(client, "hello")).isEqualTo("hello");
			assertThat(roundTrip(client, "again")).isEqualTo("again");
		}
		assertThat(this.proxy.mode()).isEqualTo(TcpProxy.Mode.FORWARD);
		assertThat(this.proxy.resets()).isZero();
	}

	@Test
	void latencyDelaysEachDirection() throws IOException {
		this.proxy.latency(Duration.ofMillis(300));
		try (Socket client = connect()) {
			long start = System.nanoTime();
			assertThat(roundTrip(client, "slow")).isEqualTo("slow");
			// one delay on the way there, one on the way back
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(600));
			this.proxy.forward();
			start = System.nanoTime();
			assertThat(roundTrip(client, "fast")).isEqualTo("fast");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(600));
		}
	}

	@Test
	void blackHoleHoldsBytesWithoutClosingAndReleasesThemWhenHealed() throws IOException {
		try (Socket open = connect()) {
			assertThat(roundTrip(open, "before")).isEqualTo("before");
			this.proxy.blackHole();
			send(open, "held");
			open.setSoTimeout(500);
			assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> open.getInputStream().read());
			assertThat(this.echo.received()).isEqualTo("before".length());
			// a connection made during the black hole is accepted and reaches nothing
			try (Socket late = connect()) {
				send(late, "late");
				late.setSoTimeout(500);
				assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> late.getInputStream().read());
				assertThat(this.echo.connections()).isEqualTo(1);
				assertThat(this.proxy.connections()).isEqualTo(2);
				this.proxy.forward();
				open.setSoTimeout((int) READ_TIMEOUT.toMillis());
				late.setSoTimeout((int) READ_TIMEOUT.toMillis());
				assertThat(read(open, 4)).isEqualTo("held");
				assertThat(read(late, 4)).isEqualTo("late");
			}
		}
		assertThat(this.proxy.resets()).isZero();
	}

	@Test
	void resetOnReplyLetsTheRequestThroughAndResetsAtTheReply() throws IOException {
		this.proxy.resetOnReply();
		try (Socket client = connect()) {
			send(client, "work");
			assertThatExceptionOfType(SocketException.class).isThrownBy(() -> client.getInputStream().read());
		}
		// the server did the work, the client never learnt of it
		assertThat(this.echo.received()).isEqualTo("work".length());
		assertThat(this.proxy.resets()).isEqualTo(2);
		this.proxy.forward();
		try (Socket client = connect()) {
			assertThat(roundTrip(client, "healed")).isEqualTo("healed");
		}
	}

	@Test
	void resetAllResetsOpenConnectionsAndNewOnesWork() throws IOException {
		try (Socket first = connect(); Socket second = connect()) {
			assertThat(roundTrip(first, "one")).isEqualTo("one");
			assertThat(roundTrip(second, "two")).isEqualTo("two");
			this.proxy.resetAll();
			assertThatExceptionOfType(SocketException.class).isThrownBy(() -> first.getInputStream().read());
			assertThatExceptionOfType(SocketException.class).isThrownBy(() -> second.getInputStream().read());
		}
		assertThat(this.proxy.resets()).isEqualTo(4);
		try (Socket client = connect()) {
			assertThat(roundTrip(client, "fresh")).isEqualTo("fresh");
		}
	}

	private Socket connect() throws IOException {
		Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.proxy.port());
		socket.setSoTimeout((int) READ_TIMEOUT.toMillis());
		return socket;
	}

	private static String roundTrip(Socket socket, String text) throws IOException {
		send(socket, text);
		return read(socket, text.length());
	}

	private static void send(Socket socket, String text) throws IOException {
		OutputStream out = socket.getOutputStream();
		out.write(text.getBytes(StandardCharsets.US_ASCII));
		out.flush();
	}

	private static String read(Socket socket, int length) throws IOException {
		byte[] bytes = socket.getInputStream().readNBytes(length);
		return new String(bytes, StandardCharsets.US_ASCII);
	}

	/**
	 * Echoes every byte back, counting bytes and connections.
	 */
	private static final class EchoServer implements AutoCloseable {

		private final ServerSocket server;

		private final AtomicInteger received = new AtomicInteger();

		private final AtomicInteger connections = new AtomicInteger();

		private final List<Socket> sockets = new CopyOnWriteArrayList<>();

		EchoServer() throws IOException {
			this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
			Thread acceptor = new Thread(this::accept, "echo-server");
			acceptor.setDaemon(true);
			acceptor.start();
		}

		int port() {
			return this.server.getLocalPort();
		}

		int received() {
			return this.received.get();
		}

		int connections() {
			return this.connections.get();
		}

		private void accept() {
			while (!this.server.isClosed()) {
				try {
					Socket socket = this.server.accept();
					this.connections.incrementAndGet();
					this.sockets.add(socket);
					Thread echo = new Thread(() -> echo(socket), "echo");
					echo.setDaemon(true);
					echo.start();
				}
				catch (IOException ex) {
					// closed
				}
			}
		}

		private void echo(Socket socket) {
			byte[] buffer = new byte[1024];
			try (InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					this.received.addAndGet(read);
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException ex) {
				// reset or closed
			}
		}

		@Override
		public void close() {
			try {
				this.server.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
			for (Socket socket : this.sockets) {
				try {
					socket.close();
				}
				catch (IOException ex) {
					// closing anyway
				}
			}
		}

	}

}
