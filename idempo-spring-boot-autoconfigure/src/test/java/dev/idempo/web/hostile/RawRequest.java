package dev.idempo.web.hostile;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Builds the exact bytes of one HTTP/1.1 request. Header values are given as bytes (or as
 * ISO-8859-1 text), so that control characters, non-ASCII bytes and broken framing go on
 * the wire as written. By default it adds {@code Host}, {@code Content-Type:
 * application/json}, {@code Connection: close} and the {@code Content-Length} of the
 * body; each can be left out or replaced.
 *
 * @author idempo
 */
final class RawRequest {

	private String requestLine;

	private final List<byte[]> headerLines = new ArrayList<>();

	private byte[] body = new byte[0];

	private @Nullable String contentType = "application/json";

	private @Nullable String contentLength;

	private boolean automaticContentLength = true;

	private boolean host = true;

	private boolean close = true;

	private String lineEnd = "\r\n";

	private RawRequest(String requestLine) {
		this.requestLine = requestLine;
	}

	/**
	 * A {@code POST} to {@code path} with an empty JSON object as its body.
	 * @param path the request target, as sent
	 * @return the builder
	 */
	static RawRequest post(String path) {
		return new RawRequest("POST " + path + " HTTP/1.1").body("{}");
	}

	/**
	 * A request with the given request line (method, target and version), as sent.
	 * @param requestLine the request line without its line end
	 * @return the builder
	 */
	static RawRequest requestLine(String requestLine) {
		return new RawRequest(requestLine).body("{}");
	}

	/**
	 * Adds {@code Idempotency-Key} with a value of the given parts.
	 * @param parts strings (sent as ISO-8859-1), characters and integers (one byte each)
	 * @return this builder
	 */
	RawRequest key(Object... parts) {
		return header("Idempotency-Key", parts);
	}

	/**
	 * Adds a header line {@code name: value}.
	 * @param name the header name, as sent
	 * @param parts the value: strings (ISO-8859-1) and integers (one byte each)
	 * @return this builder
	 */
	RawRequest header(String name, Object... parts) {
		Object[] line = new Object[parts.length + 1];
		line[0] = name + ": ";
		System.arraycopy(parts, 0, line, 1, parts.length);
		return headerLine(line);
	}

	/**
	 * Adds a header line exactly as given (without its line end).
	 * @param parts strings (ISO-8859-1) and integers (one byte each)
	 * @return this builder
	 */
	RawRequest headerLine(Object... parts) {
		this.headerLines.add(bytes(parts));
		return this;
	}

	/**
	 * Replaces the body with UTF-8 text, declared by its length.
	 * @param body the body
	 * @return this builder
	 */
	RawRequest body(String body) {
		return body(body.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Replaces the body with bytes, declared by their length.
	 * @param body the body
	 * @return this builder
	 */
	RawRequest body(byte[] body) {
		this.body = body;
		return this;
	}

	/**
	 * Sends {@code raw} after the head as it is, with {@code Transfer-Encoding: chunked}
	 * and no {@code Content-Length}: the caller writes the chunks (or breaks them).
	 * @param raw the chunked body bytes as sent
	 * @return this builder
	 */
	RawRequest chunked(String raw) {
		this.body = raw.getBytes(StandardCharsets.ISO_8859_1);
		this.automaticContentLength = false;
		return header("Transfer-Encoding", "chunked");
	}

	/**
	 * Declares a {@code Content-Length} other than the body's.
	 * @param declared the header value as sent
	 * @return this builder
	 */
	RawRequest contentLength(String declared) {
		this.contentLength = declared;
		return this;
	}

	/**
	 * Sends no {@code Content-Length} of its own.
	 * @return this builder
	 */
	RawRequest noContentLength() {
		this.automaticContentLength = false;
		return this;
	}

	/**
	 * Replaces or removes the {@code Content-Type}.
	 * @param contentType the value, {@code null} for none
	 * @return this builder
	 */
	RawRequest contentType(@Nullable String contentType) {
		this.contentType = contentType;
		return this;
	}

	/**
	 * Sends no {@code Host} header.
	 * @return this builder
	 */
	RawRequest noHost() {
		this.host = false;
		return this;
	}

	/**
	 * Sends no {@code Connection: close}: the connection may stay open after the
	 * response.
	 * @return this builder
	 */
	RawRequest keepAlive() {
		this.close = false;
		return this;
	}

	/**
	 * Ends every line of the head with a bare LF instead of CRLF.
	 * @return this builder
	 */
	RawRequest bareLineFeeds() {
		this.lineEnd = "\n";
		return this;
	}

	/**
	 * The request's bytes.
	 * @return the bytes, exactly as they go on the wire
	 */
	byte[] build() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		line(out, this.requestLine.getBytes(StandardCharsets.ISO_8859_1));
		if (this.host) {
			line(out, bytes("Host: 127.0.0.1"));
		}
		// the hostile lines first, so that the container meets them before anything
		// that could end the head early
		for (byte[] headerLine : this.headerLines) {
			line(out, headerLine);
		}
		if (this.contentType != null) {
			line(out, bytes("Content-Type: " + this.contentType));
		}
		if (this.contentLength != null) {
			line(out, bytes("Content-Length: " + this.contentLength));
		}
		else if (this.automaticContentLength) {
			line(out, bytes("Content-Length: " + this.body.length));
		}
		if (this.close) {
			line(out, bytes("Connection: close"));
		}
		out.writeBytes(this.lineEnd.getBytes(StandardCharsets.ISO_8859_1));
		out.writeBytes(this.body);
		return out.toByteArray();
	}

	private void line(ByteArrayOutputStream out, byte[] line) {
		out.writeBytes(line);
		out.writeBytes(this.lineEnd.getBytes(StandardCharsets.ISO_8859_1));
	}

	/**
	 * Concatenates strings (as ISO-8859-1), characters and integers (as single bytes) and
	 * byte arrays.
	 * @param parts the parts
	 * @return the bytes
	 */
	static byte[] bytes(Object... parts) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		for (Object part : parts) {
			if (part instanceof Character character) {
				part = (int) character;
			}
			if (part instanceof Integer octet) {
				if (octet < 0 || octet > 0xFF) {
					throw new IllegalArgumentException("Not an octet: " + octet);
				}
				out.write(octet);
			}
			else if (part instanceof String text) {
				for (int i = 0; i < text.length(); i++) {
					if (text.charAt(i) > 0xFF) {
						throw new IllegalArgumentException("Not ISO-8859-1: " + text);
					}
				}
				out.writeBytes(text.getBytes(StandardCharsets.ISO_8859_1));
			}
			else if (part instanceof byte[] raw) {
				out.writeBytes(raw);
			}
			else {
				throw new IllegalArgumentException("Not a string, octet or byte array: " + part);
			}
		}
		return out.toByteArray();
	}

}
