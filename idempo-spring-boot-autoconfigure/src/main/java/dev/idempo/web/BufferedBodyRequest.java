package dev.idempo.web;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.jspecify.annotations.Nullable;

/**
 * Lets the request flow read the body to fingerprint it before the handler does. Nothing
 * is buffered unless {@link #body()} is called (only for protected requests); the handler
 * then reads the same bytes from memory.
 *
 * @author idempo
 */
public class BufferedBodyRequest extends HttpServletRequestWrapper {

	private byte @Nullable [] body;

	private boolean streamTaken;

	/**
	 * Wraps a request.
	 * @param request the request
	 */
	public BufferedBodyRequest(HttpServletRequest request) {
		super(request);
	}

	/**
	 * Reads the whole body into memory, once.
	 * @return the body bytes
	 * @throws IOException if reading fails
	 * @throws IllegalStateException if the application read the body first
	 */
	public byte[] body() throws IOException {
		if (this.body == null) {
			if (this.streamTaken) {
				throw new IllegalStateException("The request body was read before the idempotency fingerprint");
			}
			this.body = super.getInputStream().readAllBytes();
		}
		return this.body;
	}

	@Override
	public ServletInputStream getInputStream() throws IOException {
		if (this.body == null) {
			this.streamTaken = true;
			return super.getInputStream();
		}
		return new ByteArrayServletInputStream(this.body);
	}

	@Override
	public BufferedReader getReader() throws IOException {
		if (this.body == null) {
			this.streamTaken = true;
			return super.getReader();
		}
		String encoding = getCharacterEncoding();
		Charset charset = (encoding != null) ? Charset.forName(encoding) : StandardCharsets.ISO_8859_1;
		return new BufferedReader(new InputStreamReader(new ByteArrayInputStream(this.body), charset));
	}

	private static final class ByteArrayServletInputStream extends ServletInputStream {

		private final ByteArrayInputStream in;

		ByteArrayServletInputStream(byte[] body) {
			this.in = new ByteArrayInputStream(body);
		}

		@Override
		public int read() {
			return this.in.read();
		}

		@Override
		public int read(byte[] b, int off, int len) {
			return this.in.read(b, off, len);
		}

		@Override
		public byte[] readAllBytes() {
			return this.in.readAllBytes();
		}

		@Override
		public int available() {
			return this.in.available();
		}

		@Override
		public boolean isFinished() {
			return this.in.available() == 0;
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setReadListener(ReadListener listener) {
			try {
				listener.onDataAvailable();
				listener.onAllDataRead();
			}
			catch (IOException ex) {
				listener.onError(ex);
			}
		}

	}

}
