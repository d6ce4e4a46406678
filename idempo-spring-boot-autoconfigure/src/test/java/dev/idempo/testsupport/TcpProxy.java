package dev.idempo.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on a loopback port of its own, in front of a real server: tests that
 * need a store that is down, then up, on one address start it only when the store is to
 * be "back". Closing it cuts every forwarded connection.
 */
public final class TcpProxy implements AutoCloseable {

	private final ServerSocket server;

	private final String targetHost;

	private final int targetPort;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private TcpProxy(ServerSocket server, String targetHost, int targetPort) {
		this.server = server;
		this.targetHost = targetHost;
		this.targetPort = targetPort;
	}

	/**
	 * Starts forwarding {@code port} on the loopback address to the target.
	 * @param port the port to listen on (typically chosen free earlier)
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
			Thread acceptor = new Thread(proxy::accept, "tcp-proxy-" + port);
			acceptor.setDaemon(true);
			acceptor.start();
			return proxy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				Socket upstream = new Socket(this.targetHost, this.targetPort);
				this.sockets.add(client);
				this.sockets.add(upstream);
				pump(client, upstream);
				pump(upstream, client);
			}
			catch (IOException ex) {
				// closed, or the target refused: the client sees its connection end
			}
		}
	}

	private void pump(Socket from, Socket to) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
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
				closeQuietly(from);
				closeQuietly(to);
			}
		}, "tcp-proxy-pump");
		thread.setDaemon(true);
		thread.start();
	}

	@Override
	public void close() {
		closeQuietly(this.server);
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
