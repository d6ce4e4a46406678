package dev.idempo.client;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.jspecify.annotations.Nullable;

/**
 * A real HTTP server on {@code 127.0.0.1} and a free port, answering from a script: each
 * request takes the next answer (200 when the script is empty), and is recorded with its
 * headers, body and arrival time. An answer may instead close the connection without a
 * word, or hold the request until {@link #releaseHeld()}.
 *
 * @author idempo
 */
final class ScriptedHttpServer implements AutoCloseable {

	private final HttpServer server;

	private final ExecutorService executor = Executors.newFixedThreadPool(4);

	private final ConcurrentLinkedDeque<Answer> script = new ConcurrentLinkedDeque<>();

	private final List<Sent> sent = new CopyOnWriteArrayList<>();

	private final AtomicInteger received = new AtomicInteger();

	private final CountDownLatch held = new CountDownLatch(1);

	ScriptedHttpServer() {
		try {
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.createContext("/", this::handle);
		this.server.setExecutor(this.executor);
		this.server.start();
	}

	/**
	 * Adds an answer to the script.
	 * @param status its status
	 * @param headers names and values, alternately
	 * @return this server
	 */
	ScriptedHttpServer answer(int status, String... headers) {
		this.script.add(new Answer(status, headers, false, false));
		return this;
	}

	/** Adds an answer that closes the connection without answering. */
	ScriptedHttpServer drop() {
		this.script.add(new Answer(0, new String[0], true, false));
		return this;
	}

	/** Adds an answer that comes only after {@link #releaseHeld()} (a 200). */
	ScriptedHttpServer hold() {
		this.script.add(new Answer(200, new String[0], false, true));
		return this;
	}

	void releaseHeld() {
		this.held.countDown();
	}

	String url(String path) {
		return "http://127.0.0.1:" + this.server.getAddress().getPort() + path;
	}

	List<Sent> sent() {
		return new ArrayList<>(this.sent);
	}

	private void handle(HttpExchange exchange) throws IOException {
		byte[] body = exchange.getRequestBody().readAllBytes();
		int number = this.received.incrementAndGet();
		this.sent.add(new Sent(exchange.getRequestMethod(), Map.copyOf(exchange.getRequestHeaders()),
				new String(body, StandardCharsets.UTF_8), System.nanoTime()));
		Answer answer = this.script.poll();
		if (answer == null) {
			answer = new Answer(200, new String[0], false, false);
		}
		if (answer.drop()) {
			// without response headers, closing the exchange closes the connection
			exchange.close();
			return;
		}
		if (answer.held()) {
			awaitRelease();
		}
		for (int i = 0; i < answer.headers().length; i += 2) {
			exchange.getResponseHeaders().add(answer.headers()[i], answer.headers()[i + 1]);
		}
		byte[] text = ("answer " + number).getBytes(StandardCharsets.UTF_8);
		exchange.sendResponseHeaders(answer.status(), text.length);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(text);
		}
	}

	private void awaitRelease() {
		try {
			this.held.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		releaseHeld();
		this.server.stop(0);
		this.executor.shutdownNow();
	}

	record Answer(int status, String[] headers, boolean drop, boolean held) {
	}

	/**
	 * A request as it arrived.
	 */
	record Sent(String method, Map<String, List<String>> headers, String body, long arrivedNanos) {

		@Nullable String header(String name) {
			List<String> values = values(name);
			return values.isEmpty() ? null : values.get(0);
		}

		List<String> values(String name) {
			for (Map.Entry<String, List<String>> header : this.headers.entrySet()) {
				if (header.getKey().equalsIgnoreCase(name)) {
					return header.getValue();
				}
			}
			return List.of();
		}

		@Nullable String key() {
			return header("Idempotency-Key");
		}

	}

}
