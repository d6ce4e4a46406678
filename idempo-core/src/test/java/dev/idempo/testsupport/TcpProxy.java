package dev.idempo.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A TCP forwarder on a loopback port of its own, in front of a real server, that can
 * misbehave the way networks do. Tests that need a store that is down, then up, on one
 * address start it only when the store is to be "back"; tests of cut and slow connections
 * switch its {@link Mode}:
 * <ul>
 * <li>{@link Mode#FORWARD}: bytes pass as they come;</li>
 * <li>{@link Mode#LATENCY}: every chunk, in both directions, waits {@link #latency()}
 * before it is passed on;</li>
 * <li>{@link Mode#BLACK_HOLE}: nothing passes and nothing is closed, as when a route
 * drops every packet: what is in flight waits, and passes once the mode changes back
 * (TCP's retransmission after a partition heals); new connections are accepted but reach
 * the server only then. Clients see silence, so only their own timeouts end their
 * waits;</li>
 * <li>{@link Mode#RESET_ON_REPLY}: requests reach the server, but the first bytes the
 * server sends back reset both sides of that connection (an RST, not a FIN) instead of
 * arriving: the server did the work and the client never learns the outcome. New
 * connections are made, so a client can reconnect and be cut again; after
 * {@link #resetNextReplies(int)} only so many times, then the proxy forwards.</li>
 * <li>{@link Mode#HOLD_REPLIES}: requests reach the server, but what the server sends
 * back waits until the mode changes: the server did the work and the client has not
 * learnt the outcome yet.</li>
 * </ul>
 * {@link #resetAll()} resets every open connection at once; {@link #close()} stops
 * listening too.
 */
public final class TcpProxy implements AutoCloseable {

	/** How the proxy treats the bytes it forwards. */
	public enum Mode {

		/** Bytes pass as they come. */
		FORWARD,

		/** Every chunk waits {@link TcpProxy#latency()} first. */
		LATENCY,

		/** Nothing passes, nothing is closed, until the mode changes. */
		BLACK_HOLE,

		/** The server's first reply on a connection resets that connection instead. */
		RESET_ON_REPLY,

		/** Requests pass; replies wait until the mode changes. */
		HOLD_REPLIES

	}

	private final ServerSocket server;

	private final String targetHost;

	private final int targetPort;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition modeChanged = this.lock.newCondition();

	private final AtomicInteger resets = new AtomicInteger();

	private final AtomicInteger connections = new AtomicInteger();

	/** Replies {@link Mode#RESET_ON_REPLY} still resets before it forwards again. */
	private final AtomicInteger replyResetsLeft = new AtomicInteger();

	private volatile Mode mode = Mode.FORWARD;

	private volatile Duration latency = Duration.ZERO;

	private TcpProxy(ServerSocket server, String targetHost, int targetPort) {
		this.server = server;
		this.targetHost = targetHost;
		this.targetPort = targetPort;
	}

	/**
	 * Starts forwarding {@code port} on the loopback address to the target.
	 * @param port the port to listen on (typically chosen free earlier), or {@code 0} for
	 * any free port
	 * @param targetHost the real server's host
	 * @param targetPort the real server's port
	 * @return the running proxy
	 */
	public static TcpProxy start(int port, String targetHost, int targetPort) {
		try {
			ServerSocket server = new ServerSocket();
			server.setReuseAddress(true);
			server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
			TcpProxy proxy = new TcpProxy(server, targetHost, targetPort);
			Thread acceptor = new Thread(proxy::accept, "tcp-proxy-" + server.getLocalPort());
			acceptor.setDaemon(true);
			acceptor.start();
			return proxy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The port the proxy listens on.
	 * @return the port
	 */
	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * The current mode.
	 * @return the mode
	 */
	public Mode mode() {
		return this.mode;
	}

	/**
	 * The delay of {@link Mode#LATENCY}.
	 * @return the delay per chunk
	 */
	public Duration latency() {
		return this.latency;
	}

	/**
	 * Passes bytes as they come again; what a black hole held back passes now.
	 */
	public void forward() {
		setMode(Mode.FORWARD);
	}

	/**
	 * Delays every chunk, in both directions, by {@code delay}.
	 * @param delay the delay per chunk
	 */
	public void latency(Duration delay) {
		this.latency = delay;
		setMode(Mode.LATENCY);
	}

	/**
	 * Lets nothing pass and closes nothing, until another mode is set.
	 */
	public void blackHole() {
		setMode(Mode.BLACK_HOLE);
	}

	/**
	 * Lets requests through and holds replies back until another mode is set.
	 */
	public void holdReplies() {
		setMode(Mode.HOLD_REPLIES);
	}

	/**
	 * Resets each connection at the first bytes its server sends back.
	 */
	public void resetOnReply() {
		this.replyResetsLeft.set(Integer.MAX_VALUE);
		setMode(Mode.RESET_ON_REPLY);
	}

	/**
	 * Resets the connections of the next {@code count} replies at their first bytes, then
	 * forwards again: a server's answer lost, and the retry's answer arriving.
	 * @param count how many replies to lose
	 */
	public void resetNextReplies(int count) {
		this.replyResetsLeft.set(count);
		setMode(Mode.RESET_ON_REPLY);
	}

	/**
	 * Takes one reset of {@link Mode#RESET_ON_REPLY}'s budget; the last one switches the
	 * proxy back to forwarding.
	 */
	private boolean takeReplyReset() {
		int left = this.replyResetsLeft.getAndUpdate((n) -> (n > 0 && n != Integer.MAX_VALUE) ? n - 1 : n);
		if (left == 1) {
			setMode(Mode.FORWARD);
		}
		return left > 0;
	}

	/**
	 * Resets every open connection now (an RST to the client and to the server). The
	 * proxy goes on accepting new connections in its current mode.
	 */
	public void resetAll() {
		reset(List.copyOf(this.sockets));
	}

	/**
	 * How many sockets the proxy has reset so far, by {@link Mode#RESET_ON_REPLY} or
	 * {@link #resetAll()} (a connection is two: the client's and the server's side).
	 * @return the count
	 */
	public int resets() {
		return this.resets.get();
	}

	/**
	 * How many connections clients have made to the proxy so far, whatever became of
	 * them.
	 * @return the count
	 */
	public int connections() {
		return this.connections.get();
	}

	private void setMode(Mode mode) {
		this.lock.lock();
		try {
			this.mode = mode;
			this.modeChanged.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	private void awaitNotBlackHole() throws InterruptedException {
		awaitPassing(false);
	}

	/** Waits while bytes going this way may not pass. */
	private void awaitPassing(boolean reply) throws InterruptedException {
		this.lock.lock();
		try {
			while ((this.mode == Mode.BLACK_HOLE || (reply && this.mode == Mode.HOLD_REPLIES))
					&& !this.server.isClosed()) {
				this.modeChanged.await();
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				this.connections.incrementAndGet();
				this.sockets.add(client);
				Thread connector = new Thread(() -> connect(client), "tcp-proxy-connect");
				connector.setDaemon(true);
				connector.start();
			}
			catch (IOException ex) {
				// closed
			}
		}
	}

	private void connect(Socket client) {
		try {
			awaitNotBlackHole();
			Socket upstream = new Socket(this.targetHost, this.targetPort);
			this.sockets.add(upstream);
			pump(client, upstream, false);
			pump(upstream, client, true);
		}
		catch (IOException | InterruptedException ex) {
			// the target refused: the client sees its connection end
			closeQuietly(client);
			this.sockets.remove(client);
		}
	}

	private void pump(Socket from, Socket to, boolean reply) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					awaitPassing(reply);
					Mode now = this.mode;
					if (now == Mode.LATENCY) {
						Thread.sleep(this.latency.toMillis());
					}
					else if (now == Mode.RESET_ON_REPLY && reply && takeReplyReset()) {
						reset(List.of(from, to));
						return;
					}
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// one side closed
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
				this.sockets.remove(from);
				this.sockets.remove(to);
			}
		}, "tcp-proxy-pump");
		thread.setDaemon(true);
		thread.start();
	}

	/**
	 * Resets {@code sockets}: all of them are made to reset on close before any is
	 * closed, so that a pump thread woken by the first close closes the others with an
	 * RST too, never with a FIN.
	 */
	private void reset(List<Socket> sockets) {
		for (Socket socket : sockets) {
			try {
				if (!socket.isClosed()) {
					socket.setSoLinger(true, 0);
					this.resets.incrementAndGet();
				}
			}
			catch (IOException ex) {
				// closed meanwhile
			}
		}
		sockets.forEach(TcpProxy::closeQuietly);
	}

	@Override
	public void close() {
		closeQuietly(this.server);
		setMode(this.mode);
		this.sockets.forEach(TcpProxy::closeQuietly);
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// closing anyway
		}
	}

}
