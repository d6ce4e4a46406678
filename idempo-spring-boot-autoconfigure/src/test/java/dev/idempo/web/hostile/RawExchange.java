package dev.idempo.web.hostile;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * Sends one request over a plain socket, bytes exactly as given, and reads what comes
 * back until the response is complete, the server closes the connection, or a deadline
 * passes. Nothing is retried, normalised or added: a hang is reported as
 * {@link RawResponse#timedOut()}, never waited out.
 *
 * @author idempo
 */
final class RawExchange {

	private RawExchange() {
	}

	/**
	 * What the client does after sending its bytes.
	 */
	enum Ending {

		/** Keeps its side open and reads (a client that stops sending). */
		KEEP_OPEN,

		/**
		 * Shuts its output down (half-close: the server reads end of stream) and reads.
		 */
		HALF_CLOSE

	}

	/**
	 * Sends {@code request} and reads the response. The bytes are written on a thread of
	 * their own while this one reads, so that a server that answers before reading
	 * everything (or never reads at all) is heard, and a write that blocks counts against
	 * the deadline like a read.
	 * @param port the server port on the loopback address
	 * @param request the bytes to send, exactly
	 * @param ending what the client does after sending
	 * @param deadline how long the whole exchange may take before it counts as a hang
	 * @return what came back
	 */
	static RawResponse exchange(int port, byte[] request, Ending ending, Duration deadline) {
		long start = System.nanoTime();
		long end = start + deadline.toNanos();
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
			AtomicBoolean sendFailed = new AtomicBoolean();
			Thread writer = new Thread(() -> write(socket, request, ending, sendFailed), "raw-exchange-writer");
			writer.setDaemon(true);
			writer.start();
			ByteArrayOutputStream received = new ByteArrayOutputStream();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[8192];
			while (true) {
				RawResponse complete = RawResponse.parse(received.toByteArray(), false, sendFailed.get(), start);
				if (complete != null) {
					return complete;
				}
				long remainingMillis = (end - System.nanoTime()) / 1_000_000;
				if (remainingMillis <= 0) {
					return RawResponse.timedOut(received.toByteArray(), sendFailed.get(), start);
				}
				socket.setSoTimeout((int) remainingMillis);
				int count;
				try {
					count = in.read(buffer);
				}
				catch (SocketTimeoutException ex) {
					return RawResponse.timedOut(received.toByteArray(), sendFailed.get(), start);
				}
				catch (SocketException ex) {
					// reset by the server: closed
					count = -1;
				}
				if (count < 0) {
					RawResponse closed = RawResponse.parse(received.toByteArray(), true, sendFailed.get(), start);
					return (closed != null) ? closed
							: RawResponse.closedWithoutAnswer(received.toByteArray(), sendFailed.get(), start);
				}
				received.write(buffer, 0, count);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static void write(Socket socket, byte[] request, Ending ending, AtomicBoolean sendFailed) {
		try {
			OutputStream out = socket.getOutputStream();
			out.write(request);
			out.flush();
			if (ending == Ending.HALF_CLOSE) {
				socket.shutdownOutput();
			}
		}
		catch (IOException ex) {
			// the server closed before reading everything (or the exchange is over)
			sendFailed.set(true);
		}
	}

	/**
	 * What came back for one request.
	 *
	 * @param status the status code, {@code -1} if no complete status line arrived
	 * @param headers the response headers, names in lower case
	 * @param body the response body, de-chunked
	 * @param raw every byte received
	 * @param timedOut whether the deadline passed before the response was complete or the
	 * connection closed
	 * @param sendFailed whether writing the request failed before the response was read
	 * @param elapsed how long the exchange took
	 */
	record RawResponse(int status, Map<String, List<String>> headers, byte[] body, byte[] raw, boolean timedOut,
			boolean sendFailed, Duration elapsed) {

		boolean answered() {
			return this.status > 0;
		}

		@Nullable String header(String name) {
			List<String> values = this.headers.get(name.toLowerCase(Locale.ROOT));
			return (values != null && !values.isEmpty()) ? values.get(0) : null;
		}

		String bodyText() {
			return new String(this.body, StandardCharsets.UTF_8);
		}

		/** The response as text, for assertion messages. */
		String describe() {
			if (this.timedOut) {
				return "no complete answer within " + this.elapsed.toMillis() + " ms (received: " + printable(this.raw)
						+ ")";
			}
			if (!answered()) {
				return "closed without an answer after " + this.elapsed.toMillis() + " ms (received: "
						+ printable(this.raw) + ")";
			}
			return printable(this.raw) + " [" + this.elapsed.toMillis() + " ms"
					+ (this.sendFailed ? ", the server closed before the whole request was sent" : "") + "]";
		}

		private static String printable(byte[] bytes) {
			String text = new String(bytes, StandardCharsets.ISO_8859_1);
			if (text.length() > 600) {
				text = text.substring(0, 600) + "...";
			}
			return text.replace("\r", "\\r").replace("\n", "\\n\n");
		}

		static RawResponse timedOut(byte[] raw, boolean sendFailed, long start) {
			return new RawResponse(-1, Map.of(), new byte[0], raw, true, sendFailed, since(start));
		}

		static RawResponse closedWithoutAnswer(byte[] raw, boolean sendFailed, long start) {
			return new RawResponse(-1, Map.of(), new byte[0], raw, false, sendFailed, since(start));
		}

		/**
		 * Parses a response if it is complete.
		 * @param raw what was received so far
		 * @param closed whether the server closed the connection (a body without framing
		 * ends there)
		 * @return the response, or {@code null} if more must be read
		 */
		static @Nullable RawResponse parse(byte[] raw, boolean closed, boolean sendFailed, long start) {
			int headEnd = indexOf(raw, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), 0);
			if (headEnd < 0) {
				return null;
			}
			String head = new String(raw, 0, headEnd, StandardCharsets.ISO_8859_1);
			if (head.matches("(?s)HTTP/1\\.1 1\\d\\d.*") && !head.startsWith("HTTP/1.1 101")) {
				// an interim response (100 Continue): the final one follows
				return parse(Arrays.copyOfRange(raw, headEnd + 4, raw.length), closed, sendFailed, start);
			}
			String[] lines = head.split("\r\n");
			if (lines.length == 0 || !lines[0].startsWith("HTTP/1.1 ") || lines[0].length() < 12) {
				return null;
			}
			int status = Integer.parseInt(lines[0].substring(9, 12));
			Map<String, List<String>> headers = new LinkedHashMap<>();
			for (int i = 1; i < lines.length; i++) {
				int colon = lines[i].indexOf(':');
				if (colon > 0) {
					headers
						.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
								(name) -> new ArrayList<>())
						.add(lines[i].substring(colon + 1).trim());
				}
			}
			int bodyStart = headEnd + 4;
			byte[] rest = Arrays.copyOfRange(raw, bodyStart, raw.length);
			List<String> transferEncoding = headers.get("transfer-encoding");
			List<String> contentLength = headers.get("content-length");
			byte[] body;
			if (transferEncoding != null && transferEncoding.get(0).equalsIgnoreCase("chunked")) {
				body = dechunk(rest);
				if (body == null) {
					return null;
				}
			}
			else if (contentLength != null) {
				int length = Integer.parseInt(contentLength.get(0));
				if (rest.length < length) {
					return closed ? new RawResponse(status, headers, rest, raw, false, sendFailed, since(start)) : null;
				}
				body = Arrays.copyOf(rest, length);
			}
			else if (status == 204 || status == 304) {
				body = new byte[0];
			}
			else if (closed) {
				body = rest;
			}
			else {
				return null;
			}
			return new RawResponse(status, headers, body, raw, false, sendFailed, since(start));
		}

		private static byte @Nullable [] dechunk(byte[] chunked) {
			ByteArrayOutputStream body = new ByteArrayOutputStream();
			int position = 0;
			while (true) {
				int lineEnd = indexOf(chunked, new byte[] { '\r', '\n' }, position);
				if (lineEnd < 0) {
					return null;
				}
				String sizeLine = new String(chunked, position, lineEnd - position, StandardCharsets.ISO_8859_1);
				int semicolon = sizeLine.indexOf(';');
				int size = Integer.parseInt(((semicolon >= 0) ? sizeLine.substring(0, semicolon) : sizeLine).trim(),
						16);
				position = lineEnd + 2;
				if (size == 0) {
					// trailers, if any, end with an empty line
					return (indexOf(chunked, new byte[] { '\r', '\n' }, position) >= 0) ? body.toByteArray() : null;
				}
				if (chunked.length < position + size + 2) {
					return null;
				}
				body.write(chunked, position, size);
				position += size + 2;
			}
		}

		private static int indexOf(byte[] bytes, byte[] pattern, int from) {
			outer: for (int i = from; i <= bytes.length - pattern.length; i++) {
				for (int j = 0; j < pattern.length; j++) {
					if (bytes[i + j] != pattern[j]) {
						continue outer;
					}
				}
				return i;
			}
			return -1;
		}

		private static Duration since(long start) {
			return Duration.ofNanos(System.nanoTime() - start);
		}

	}

}
