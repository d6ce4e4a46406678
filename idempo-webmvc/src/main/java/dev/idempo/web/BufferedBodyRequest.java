package dev.idempo.web;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.jspecify.annotations.Nullable;

/**
 * Lets the request flow fingerprint the body. A body of declared length is
 * {@linkplain #stream digested as the handler reads it} and nothing of it is held; a body
 * whose fingerprint needs it whole (no {@code Content-Length}, or a canonical form) is
 * read into memory by {@link #body(long)} before the handler runs (only for protected
 * requests), and the handler then reads the same bytes from memory. If something read
 * part or all of the body first (a filter checking a signature, say), the bytes it read
 * were kept and the fingerprint still covers the whole body.
 *
 * @author idempo
 */
public class BufferedBodyRequest extends HttpServletRequestWrapper {

	/** The most memory reserved for a body before its bytes arrive. */
	static final int MAX_PRESIZE = 64 * 1024;

	private static final int UNKNOWN_LENGTH_PRESIZE = 1024;

	private byte @Nullable [] body;

	private @Nullable ReadEarlier alreadyRead;

	private @Nullable ServletInputStream stream;

	private volatile boolean recording = true;

	/** The body's digest while it streams to the handler, if it does. */
	private volatile @Nullable StreamedBody streamed;

	private final BufferBudget budget;

	/**
	 * Bytes reserved from the budget for this request's body; reserved on the request
	 * thread, given back on whichever thread ends the request.
	 */
	private final AtomicLong reserved = new AtomicLong();

	/**
	 * Wraps a request, without a budget.
	 * @param request the request
	 */
	public BufferedBodyRequest(HttpServletRequest request) {
		this(request, BufferBudget.UNLIMITED);
	}

	/**
	 * Wraps a request whose body bytes are reserved from {@code budget} before they are
	 * read.
	 * @param request the request
	 * @param budget the budget
	 */
	public BufferedBodyRequest(HttpServletRequest request, BufferBudget budget) {
		super(request);
		this.budget = budget;
	}

	/**
	 * Gives the bytes this request reserved back to the budget: called when the request
	 * ends.
	 */
	public void releaseBudget() {
		long reserved = this.reserved.getAndSet(0);
		if (reserved > 0) {
			this.budget.release(reserved);
		}
	}

	/**
	 * Reads and drops what is left of the body, up to {@code maxSize} bytes, without
	 * holding it: a request refused before its body was read can then be answered on a
	 * connection the client still reads (a container closes one whose body it would have
	 * to swallow beyond a limit, and the client sees a reset instead of the answer).
	 * @param maxSize the most bytes read
	 * @return {@code false} if the client went away (nothing can be answered)
	 */
	public boolean discardRest(long maxSize) {
		byte[] scratch = new byte[16 * 1024];
		long total = 0;
		try {
			ServletInputStream in = super.getInputStream();
			int read;
			while (total < maxSize && (read = in.read(scratch)) >= 0) {
				total += read;
			}
			return true;
		}
		catch (IOException ex) {
			// the client went away: nothing to answer
			return false;
		}
	}

	private void reserveUpTo(long bytes) throws BudgetExceededException {
		long reserved = this.reserved.get();
		if (bytes <= reserved) {
			return;
		}
		if (!this.budget.tryReserve(bytes - reserved)) {
			// give back what this body holds now, not when the request ends after the
			// rest of the body was drained: bodies refused together would otherwise keep
			// every other one out until none of them fits
			releaseBudget();
			throw new BudgetExceededException(this.budget.maxBytes());
		}
		this.reserved.addAndGet(bytes - reserved);
	}

	/**
	 * Stops keeping copies of what the application reads: called by the interceptor once
	 * the handler is known, before it runs. Only bytes read earlier (by filters) are
	 * kept.
	 */
	public void stopRecording() {
		this.recording = false;
	}

	/**
	 * Whether the body can still stream to the handler: it was not read into memory.
	 * @return whether {@link #stream} may be called
	 */
	boolean canStream() {
		return this.body == null && this.streamed == null;
	}

	/**
	 * Digests the body as the application reads it, instead of holding it: bytes that
	 * filters read earlier first, then every byte read from here on.
	 * @param streamed the digest
	 */
	void stream(StreamedBody streamed) {
		ReadEarlier earlier = this.alreadyRead;
		if (earlier != null && earlier.size() > 0) {
			streamed.update(earlier.array(), 0, earlier.size());
		}
		this.alreadyRead = null;
		this.streamed = streamed;
	}

	/**
	 * Reads and digests what the application left of a {@linkplain #stream streamed}
	 * body, to its end, once: the digest then says whether it ended cleanly. More than
	 * {@code limit} bytes in all (possible only if a filter lengthened the body) fail it,
	 * as does a read that fails (the client went away or stalled, or the application
	 * reads without blocking and left bytes unread).
	 * @param limit the most body bytes read
	 */
	void finishStream(long limit) {
		StreamedBody streamed = this.streamed;
		if (streamed == null) {
			throw new IllegalStateException("The body does not stream");
		}
		if (streamed.isSettled()) {
			// read once: a body that failed is not read (and waited for) again
			return;
		}
		try {
			ServletInputStream in = getInputStream();
			// a handler that read through a ReadListener read it all (the stream says
			// so); reading it again now would be refused
			if (streamed.isShort() || !in.isFinished()) {
				byte[] scratch = new byte[16 * 1024];
				while (in.read(scratch) >= 0) {
					if (streamed.count() > limit) {
						streamed.fail();
						return;
					}
				}
			}
			if (streamed.isShort()) {
				// a filter's stream, or the container's after the client cancelled
				// (HTTP/2): not the body that was declared
				streamed.fail();
			}
			else {
				streamed.ended();
			}
		}
		catch (IOException | RuntimeException ex) {
			// the client went away or stalled, a wrapper's stream failed, or the
			// application reads without blocking (reading now is refused)
			streamed.fail();
		}
	}

	/**
	 * Reads the whole body into memory, once. The buffer is sized from the declared
	 * {@code Content-Length} (up to {@value #MAX_PRESIZE} bytes, so that a client cannot
	 * make the server reserve memory it never sends), so a typical body is read into one
	 * array of exactly its size; the length is only a hint, since a wrapper may change
	 * the body without changing it.
	 * @param maxSize the most bytes read
	 * @return the body bytes
	 * @throws IOException if reading fails
	 * @throws RequestTooLargeException if the body is larger than {@code maxSize}
	 */
	public byte[] body(long maxSize) throws IOException {
		if (this.body == null) {
			this.body = readBody(maxSize);
			this.alreadyRead = null;
		}
		return this.body;
	}

	/** The buffer to read into, holding the bytes a filter read first. */
	private byte[] presized(int earlier, long capacityLimit) throws BudgetExceededException {
		long declared = getContentLengthLong();
		// reserved as the buffer grows (from the presize below), never for bytes that
		// have not arrived: a client that declares a large body and stalls holds little
		long expected = Math.max((declared >= 0) ? declared : UNKNOWN_LENGTH_PRESIZE, earlier);
		int presize = (int) Math.min(Math.min(expected, MAX_PRESIZE), capacityLimit);
		reserveUpTo(presize);
		byte[] buffer = new byte[presize];
		if (this.alreadyRead != null) {
			buffer = grow(buffer, earlier, capacityLimit);
			System.arraycopy(this.alreadyRead.array(), 0, buffer, 0, earlier);
		}
		return buffer;
	}

	private byte[] readBody(long maxSize) throws IOException {
		int earlier = (this.alreadyRead != null) ? this.alreadyRead.size() : 0;
		// bytes a filter read first count towards the limit only once more arrive
		long capacityLimit = Math.min(Math.max(maxSize, earlier), Integer.MAX_VALUE - 8);
		byte[] buffer = presized(earlier, capacityLimit);
		ServletInputStream in = super.getInputStream();
		int size = earlier;
		while (true) {
			if (size == buffer.length) {
				// full: probe for one more byte before growing, since a body of exactly
				// the declared length ends here
				int next = in.read();
				if (next == -1) {
					return buffer;
				}
				if (size + 1L > maxSize) {
					throw new RequestTooLargeException(maxSize);
				}
				buffer = grow(buffer, size + 1, capacityLimit);
				buffer[size++] = (byte) next;
				continue;
			}
			int count = in.read(buffer, size, buffer.length - size);
			if (count == -1) {
				return Arrays.copyOf(buffer, size);
			}
			size += count;
			if (size > maxSize) {
				throw new RequestTooLargeException(maxSize);
			}
		}
	}

	/** Grows by doubling, up to {@code limit}, within the budget. */
	private byte[] grow(byte[] buffer, int needed, long limit) throws BudgetExceededException {
		if (needed <= buffer.length) {
			return buffer;
		}
		long grown = Math.min(Math.max(needed, Math.max(256L, 2L * buffer.length)), limit);
		reserveUpTo(grown);
		return Arrays.copyOf(buffer, (int) grown);
	}

	@Override
	public ServletInputStream getInputStream() throws IOException {
		if (this.body != null) {
			return new ByteArrayServletInputStream(this.body);
		}
		if (this.stream == null) {
			this.alreadyRead = new ReadEarlier();
			ServletInputStream delegate = super.getInputStream();
			this.stream = new RecordingServletInputStream(delegate, this.alreadyRead, this, isContainers(delegate));
		}
		return this.stream;
	}

	/**
	 * Whether a stream is the container's own, which no filter replaced: one that ends
	 * before the declared length was cut short (a filter's may be shorter by design).
	 */
	private boolean isContainers(ServletInputStream stream) {
		ServletRequest request = getRequest();
		while (request instanceof ServletRequestWrapper wrapper) {
			request = wrapper.getRequest();
		}
		try {
			return request.getInputStream() == stream;
		}
		catch (IOException | RuntimeException ex) {
			return false;
		}
	}

	/**
	 * The application's read failed, or a streamed body from the container ended before
	 * its declared length (a client that cancelled an HTTP/2 stream reads as a clean
	 * end): the latter becomes an {@link EOFException}, as on HTTP/1.1.
	 */
	private void onEndOfStream(boolean containers) throws EOFException {
		StreamedBody streamed = this.streamed;
		if (streamed != null && containers && streamed.isShort()) {
			streamed.applicationReadFailed();
			throw new EOFException("The request body ended after " + streamed.count() + " bytes, short of its "
					+ "declared Content-Length " + getContentLengthLong());
		}
	}

	private void onReadFailure() {
		StreamedBody streamed = this.streamed;
		if (streamed != null) {
			streamed.applicationReadFailed();
		}
	}

	@Override
	public BufferedReader getReader() throws IOException {
		String encoding = getCharacterEncoding();
		Charset charset = (encoding != null) ? Charset.forName(encoding) : StandardCharsets.ISO_8859_1;
		return new BufferedReader(new InputStreamReader(getInputStream(), charset));
	}

	/**
	 * Holding the body would exceed the instance's {@link BufferBudget}.
	 */
	public static class BudgetExceededException extends IOException {

		BudgetExceededException(long maxBytes) {
			super("Request bodies held by idempo would exceed " + maxBytes + " bytes");
		}

	}

	/**
	 * The body is larger than {@code idempo.max-request-size}.
	 */
	public static class RequestTooLargeException extends IOException {

		private final long maxSize;

		RequestTooLargeException(long maxSize) {
			super("Request body larger than " + maxSize + " bytes");
			this.maxSize = maxSize;
		}

		/**
		 * The limit that was exceeded.
		 * @return the limit in bytes
		 */
		public long getMaxSize() {
			return this.maxSize;
		}

	}

	/** The bytes a filter read before the fingerprint was taken, readable in place. */
	private static final class ReadEarlier extends ByteArrayOutputStream {

		byte[] array() {
			return this.buf;
		}

	}

	/** Keeps a copy of what the application reads before the fingerprint is taken. */
	private static final class RecordingServletInputStream extends ServletInputStream {

		private final ServletInputStream delegate;

		private final ByteArrayOutputStream copy;

		private final BufferedBodyRequest request;

		private final boolean containers;

		RecordingServletInputStream(ServletInputStream delegate, ByteArrayOutputStream copy,
				BufferedBodyRequest request, boolean containers) {
			this.delegate = delegate;
			this.copy = copy;
			this.request = request;
			this.containers = containers;
		}

		@Override
		public int read() throws IOException {
			int b = readDelegate(null, 0, 0);
			if (b != -1) {
				if (this.request.recording) {
					this.copy.write(b);
				}
				StreamedBody streamed = this.request.streamed;
				if (streamed != null) {
					streamed.update(b);
				}
			}
			return b;
		}

		@Override
		public int read(byte[] b, int off, int len) throws IOException {
			int count = readDelegate(b, off, len);
			if (count > 0) {
				if (this.request.recording) {
					this.copy.write(b, off, count);
				}
				StreamedBody streamed = this.request.streamed;
				if (streamed != null) {
					streamed.update(b, off, count);
				}
			}
			return count;
		}

		/**
		 * One read of the delegate: a byte if {@code b} is {@code null}, else a count.
		 */
		private int readDelegate(byte @Nullable [] b, int off, int len) throws IOException {
			int result;
			try {
				result = (b != null) ? this.delegate.read(b, off, len) : this.delegate.read();
			}
			catch (IOException | RuntimeException ex) {
				this.request.onReadFailure();
				throw ex;
			}
			if (result == -1) {
				this.request.onEndOfStream(this.containers);
			}
			return result;
		}

		@Override
		public boolean isFinished() {
			return this.delegate.isFinished();
		}

		@Override
		public boolean isReady() {
			return this.delegate.isReady();
		}

		@Override
		public void setReadListener(ReadListener listener) {
			this.delegate.setReadListener(listener);
		}

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
