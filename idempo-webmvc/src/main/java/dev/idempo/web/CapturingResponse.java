package dev.idempo.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.core.ResponseStoragePolicy;

/**
 * Keeps the body bytes of a protected response exactly as the application writes them, so
 * they can be stored before anything reaches the client (a client that retries after
 * reading the first response then always finds the record).
 * <p>
 * It passes everything straight through until {@link #startCapture(long)} is called by
 * the interceptor for a request that claimed a key. While capturing, body bytes and
 * flushes are held back; status and headers go to the wrapped response as usual. If the
 * body outgrows the limit, what was held is written out and the rest streams through:
 * {@link #isOverflowed()} then tells that the response cannot be stored.
 * <p>
 * From then on (or from {@link #holdEnd()}, for a response that is never captured) the
 * <em>end</em> of the response is held back until {@link #flushToClient()}, which the
 * filter calls once the key is stored or released, so that a client never has the whole
 * response while its key is still claimed: a retry sent the moment it arrived would meet
 * its own key in progress. Bytes that stream through reach the client as they are written
 * and flushed, but not the byte that completes a declared {@code Content-Length}, and
 * closing the stream is left to the container, which closes it (and ends a chunked body)
 * only after the filter has returned.
 * <p>
 * Held bytes are reserved from the instance's {@link BufferBudget}, shared with the
 * request bodies held for fingerprints, as they are written. A response that finds no
 * room is treated like one over the limit ({@link #isOverBudget()}): what was held is
 * written out, the rest streams through, nothing is stored. A response held whole for a
 * transaction ({@link #startHolding()}) counts against the budget but is never refused:
 * it cannot reach the client before its transaction has committed.
 *
 * @author idempo
 */
public class CapturingResponse extends HttpServletResponseWrapper {

	/**
	 * Where the capture stands: one state, changed only by {@link #to}, so that why it
	 * ended cannot contradict whether it runs. Plain field, as the flags it replaces
	 * were: a response is written by one thread at a time, and the write path reads it
	 * without a lock.
	 */
	private Capture capture = Capture.OFF;

	private long limit;

	private final HeldBody buffer = new HeldBody();

	private final BufferBudget budget;

	/** Bytes reserved from {@link #budget}: the buffer's largest capacity so far. */
	private volatile long reserved;

	/**
	 * Whether {@link #releaseBudget()} ran: the request has ended. Apart from
	 * {@link #capture}: it belongs to the request's end, under this object's lock.
	 */
	private boolean budgetReleased;

	/**
	 * Whether the application called {@code sendError}. Apart from {@link #capture}: a
	 * fact about the application, which the filter needs whatever the capture did (an
	 * error page may follow a response that had already outgrown its limit).
	 */
	private boolean errorSent;

	private @Nullable ServletOutputStream outputStream;

	private @Nullable PrintWriter writer;

	/** Whether {@link #outputStream} and {@link #writer} are this wrapper's own. */
	private boolean ownStreams;

	/**
	 * Whether the end of the response waits for {@link #flushToClient()}: from the start
	 * of the capture (or {@link #holdEnd()}) until the key is stored or released.
	 */
	private boolean endHeld;

	/** Whether a streaming content type tells that the response streams. */
	private boolean streamsByType;

	/** The {@code Content-Length} the application declared, {@code -1} if none. */
	private long declaredLength = -1;

	/** Body bytes passed on to the wrapped response while the end is held. */
	private long passedOn;

	/** What would complete the declared length, held until {@link #flushToClient()}. */
	private final ByteArrayOutputStream heldEnd = new ByteArrayOutputStream(1);

	/** Headers present before the handler ran (set by filters), lower-cased names. */
	private Map<String, List<String>> headersBefore = Map.of();

	private @Nullable String contentTypeBefore;

	/**
	 * Wraps a response, without a budget.
	 * @param response the response
	 */
	public CapturingResponse(HttpServletResponse response) {
		this(response, BufferBudget.UNLIMITED);
	}

	/**
	 * Wraps a response whose held bytes are reserved from {@code budget}; call
	 * {@link #releaseBudget()} when the request ends.
	 * @param response the response
	 * @param budget the budget shared with other requests
	 */
	public CapturingResponse(HttpServletResponse response, BufferBudget budget) {
		super(response);
		this.budget = budget;
	}

	/**
	 * Starts holding back body bytes, up to {@code limit} bytes.
	 * @param limit the largest body that can be captured
	 */
	public void startCapture(long limit) {
		if (this.outputStream != null || this.writer != null || isCommitted()) {
			// something wrote before the handler: the body cannot be captured whole
			to(Capture.NOT_STARTED);
			return;
		}
		this.capture = Capture.CAPTURING;
		this.endHeld = true;
		this.limit = limit;
		HttpServletResponse response = (HttpServletResponse) getResponse();
		Map<String, List<String>> before = new LinkedHashMap<>();
		for (String name : response.getHeaderNames()) {
			before.put(name.toLowerCase(Locale.ROOT), List.copyOf(response.getHeaders(name)));
		}
		this.headersBefore = before;
		this.contentTypeBefore = response.getContentType();
	}

	/**
	 * Holds back only the end of a response whose body is not captured (its handler's
	 * policy stores nothing): the body streams through as written, but the client gets
	 * its end only after {@link #flushToClient()}. A response written before this call
	 * cannot be held.
	 */
	public void holdEnd() {
		if (this.outputStream == null && this.writer == null && !isCommitted()) {
			this.endHeld = true;
		}
	}

	/**
	 * Lets a streaming content type (server-sent events, NDJSON) tell that the response
	 * streams: for a handler that has no return type to tell it by (a functional
	 * endpoint). A handler method's return type tells it, and a finite body it returns in
	 * such a type (a {@code String} answering {@code Accept: text/event-stream}) is
	 * stored.
	 */
	public void streamByContentType() {
		this.streamsByType = true;
	}

	/**
	 * Starts holding back everything until {@link #flushToClient()}: the whole body,
	 * whatever its size, and redirects, which are turned into a status and a
	 * {@code Location} header instead of being sent. For a transactional request, whose
	 * response may not reach the client before its transaction has committed.
	 */
	public void startHolding() {
		startCapture(Long.MAX_VALUE);
		if (this.capture == Capture.CAPTURING) {
			this.capture = Capture.HOLDING;
		}
	}

	/**
	 * Drops what the handler produced (status, headers, body) and restores the headers
	 * that were there before it ran (set by filters), so that another response can be
	 * written in its place.
	 */
	public void resetToBeforeCapture() {
		reset();
		this.headersBefore.forEach((name, values) -> {
			for (String value : values) {
				addHeader(name, value);
			}
		});
		if (this.contentTypeBefore != null) {
			setContentType(this.contentTypeBefore);
		}
	}

	/**
	 * Whether capture was asked for but could not start because the response had been
	 * written to or committed already.
	 * @return whether capture failed to start
	 */
	public boolean isCaptureFailed() {
		return this.capture == Capture.NOT_STARTED;
	}

	/**
	 * Stops holding back body bytes because the response turned out to stream: what was
	 * held is written out, the rest goes straight through, and {@link #isStreamed()}
	 * tells that the response is not to be stored.
	 * @throws IOException if writing what was held fails
	 */
	public void stopCapture() throws IOException {
		if (this.capture.capturing) {
			flushWriter();
			passThrough(Capture.STREAMED);
		}
		else {
			to(Capture.STREAMED);
		}
	}

	/**
	 * Whether the response turned out to stream its body ({@link #stopCapture()}).
	 * @return whether the response streams
	 */
	public boolean isStreamed() {
		return this.capture == Capture.STREAMED;
	}

	/**
	 * Whether body bytes are being held back.
	 * @return whether capturing
	 */
	public boolean isCapturing() {
		return this.capture.capturing;
	}

	/**
	 * Whether the body outgrew the limit (or was known to before it was written).
	 * @return whether the body is too large to store
	 */
	public boolean isOverflowed() {
		return this.capture == Capture.OVERFLOWED || this.capture == Capture.OVER_BUDGET;
	}

	/**
	 * Whether the instance's buffer budget had no room to hold the body, so it went to
	 * the client as written and cannot be stored. Implies {@link #isOverflowed()}.
	 * @return whether the body was too large for the budget
	 */
	public boolean isOverBudget() {
		return this.capture == Capture.OVER_BUDGET;
	}

	/**
	 * Gives the bytes this response reserved back to the budget: called when the request
	 * ends, since the held bytes stay in memory until then. Calling it again does
	 * nothing.
	 */
	public synchronized void releaseBudget() {
		this.budgetReleased = true;
		long bytes = this.reserved;
		if (bytes > 0) {
			this.reserved = 0;
			this.budget.release(bytes);
		}
	}

	/**
	 * Reserves room for the buffer to hold {@code size} bytes: the capacity it grows to
	 * (it doubles), not only the bytes in it. Synchronized with {@link #releaseBudget()},
	 * which a container thread may call while a handler's own thread writes; once
	 * released, nothing more is reserved.
	 * @return whether it may
	 */
	private synchronized boolean reserve(long size) {
		if (this.budgetReleased) {
			return false;
		}
		long capacity = this.buffer.capacity();
		long target = (size <= capacity) ? capacity : Math.max(2 * capacity, size);
		long more = target - this.reserved;
		if (more <= 0) {
			return true;
		}
		if (this.capture == Capture.HOLDING) {
			// held whole for a transaction: counted, never refused
			this.budget.reserve(more);
		}
		else if (!this.budget.tryReserve(more)) {
			return false;
		}
		this.reserved = target;
		return true;
	}

	/**
	 * How many body bytes are held back.
	 * @return the size of the captured body so far
	 */
	public int capturedLength() {
		flushWriter();
		return this.buffer.size();
	}

	/**
	 * Whether the application called {@code sendError}: the container renders the body
	 * later, outside of this request's filter chain.
	 * @return whether an error was sent
	 */
	public boolean isErrorSent() {
		return this.errorSent;
	}

	/**
	 * Whether and why this response is not to be stored: the one decision both executions
	 * take before their commit point ({@link IdempotentExecution} before it completes the
	 * claim, {@link TransactionalExecution} before it commits). In order: what could not
	 * be seen (capture never started; an error page the container renders after a held
	 * response; a stream), then whether the outcome is worth replaying (its status), then
	 * whether it fits (the buffer budget, the size limit). A response too large to keep
	 * is never a failure, which is why its reason comes after the status: a transactional
	 * handler's success commits with a record that answers 410, its 5xx rolls back.
	 * @param maxResponseSize the largest body that may be stored
	 * @param responses which statuses are stored ({@code idempo.responses})
	 * @return the reason, {@link NotStoredReason#NONE} if it is storable
	 */
	public NotStoredReason notStoredReason(long maxResponseSize, ResponseStoragePolicy responses) {
		Capture capture = this.capture;
		if (capture.reasonBeforeStatus) {
			return capture.reason;
		}
		if (!responses.isStored(getStatus())) {
			return NotStoredReason.STATUS;
		}
		if (capture.reason != NotStoredReason.NONE) {
			return capture.reason;
		}
		return (capturedLength() > maxResponseSize) ? NotStoredReason.TOO_LARGE : NotStoredReason.NONE;
	}

	/**
	 * Gives up capturing because the body is known to be too large before it is written.
	 * @throws IOException if writing what was held fails
	 */
	public void overflow() throws IOException {
		if (this.capture.capturing) {
			passThrough(Capture.OVERFLOWED);
		}
	}

	/**
	 * The response as captured so far, with the replayable headers the handler set (those
	 * already present before it ran, set by filters, are left to those filters on
	 * replay).
	 * @param replayable which headers to keep
	 * @return the captured response
	 */
	public CapturedResponse captured(Predicate<String> replayable) {
		flushWriter();
		return new CapturedResponse(getStatus(), headersSet(replayable), this.buffer.toByteArray());
	}

	/**
	 * The response as captured so far, encoded as a {@link ResponseEnvelope} straight
	 * from the capture buffer: the same bytes as encoding {@link #captured(Predicate)},
	 * without copying the body out first.
	 * @param replayable which headers to keep
	 * @return the envelope
	 */
	public byte[] envelope(Predicate<String> replayable) {
		flushWriter();
		return ResponseEnvelope.encode(getStatus(), headersSet(replayable), this.buffer.array(), 0, this.buffer.size());
	}

	/**
	 * The envelope to store after {@code filters} saw the captured response (straight
	 * from the capture buffer when there are none), or {@code null} if one refused to
	 * store it.
	 * @param replayable which headers to keep
	 * @param request the request, which the filters see
	 * @param filters the filters, in order
	 * @return the envelope, or {@code null}
	 */
	public byte @Nullable [] envelope(Predicate<String> replayable, HttpServletRequest request,
			List<IdempotentResponseFilter> filters) {
		if (filters.isEmpty()) {
			return envelope(replayable);
		}
		CapturedResponse response = captured(replayable);
		for (IdempotentResponseFilter filter : filters) {
			response = filter.beforeStore(request, response);
			if (response == null) {
				return null;
			}
		}
		return ResponseEnvelope.encode(response);
	}

	private Map<String, List<String>> headersSet(Predicate<String> replayable) {
		HttpServletResponse response = (HttpServletResponse) getResponse();
		Map<String, List<String>> headers = new LinkedHashMap<>();
		String contentType = response.getContentType();
		if (contentType != null && !contentType.equals(this.contentTypeBefore)) {
			headers.put("Content-Type", List.of(contentType));
		}
		for (String name : response.getHeaderNames()) {
			if (name.equalsIgnoreCase("Content-Type") || !replayable.test(name) || containsIgnoreCase(headers, name)) {
				continue;
			}
			List<String> values = List.copyOf(response.getHeaders(name));
			if (!values.equals(this.headersBefore.get(name.toLowerCase(Locale.ROOT)))) {
				headers.put(name, values);
			}
		}
		return headers;
	}

	/**
	 * Writes the held-back body to the client and stops capturing, and lets the end of
	 * the response go: called once the key is stored or released.
	 * @throws IOException if writing fails
	 */
	public void flushToClient() throws IOException {
		flushWriter();
		this.endHeld = false;
		if (this.capture.capturing) {
			this.capture = Capture.ENDED;
			if (this.buffer.size() > 0 && !isCommitted() && !containsHeader("Content-Length")) {
				getResponse().setContentLength(this.buffer.size());
			}
			writeBuffer();
		}
		if (this.heldEnd.size() > 0) {
			this.heldEnd.writeTo(getResponse().getOutputStream());
			this.heldEnd.reset();
		}
	}

	/**
	 * Throws away the held-back body and end (the request failed with an exception and
	 * the container will render an error instead, or cut a response it had begun).
	 */
	public void discard() {
		flushWriter();
		this.buffer.reset();
		dropHeldEnd();
		this.endHeld = false;
		endCapture();
	}

	@Override
	public ServletOutputStream getOutputStream() throws IOException {
		if (this.writer != null) {
			throw new IllegalStateException("getWriter() has already been called on this response");
		}
		if (this.outputStream == null) {
			this.ownStreams = this.capture.capturing || this.endHeld;
			this.outputStream = this.ownStreams ? new CapturingOutputStream() : super.getOutputStream();
		}
		return this.outputStream;
	}

	@Override
	public PrintWriter getWriter() throws IOException {
		if (this.outputStream != null && this.writer == null) {
			throw new IllegalStateException("getOutputStream() has already been called on this response");
		}
		if (this.writer == null) {
			if (this.capture.capturing || this.endHeld) {
				String encoding = getCharacterEncoding();
				Charset charset = Charset.forName((encoding != null) ? encoding : "ISO-8859-1");
				this.ownStreams = true;
				this.outputStream = new CapturingOutputStream();
				this.writer = new PrintWriter(new OutputStreamWriter(this.outputStream, charset));
			}
			else {
				this.writer = super.getWriter();
			}
		}
		return this.writer;
	}

	@Override
	public void flushBuffer() throws IOException {
		if (!this.capture.capturing) {
			flushWriter();
			super.flushBuffer();
		}
	}

	@Override
	public void resetBuffer() {
		flushWriter();
		super.resetBuffer();
		this.buffer.reset();
		dropHeldEnd();
	}

	@Override
	public void reset() {
		flushWriter();
		super.reset();
		this.buffer.reset();
		dropHeldEnd();
		this.declaredLength = -1;
		if (this.ownStreams) {
			// as the container does: after a reset either getWriter or getOutputStream
			// may be used
			this.outputStream = null;
			this.writer = null;
		}
	}

	@Override
	public void setContentLength(int len) {
		super.setContentLength(len);
		this.declaredLength = len;
	}

	@Override
	public void setContentLengthLong(long len) {
		super.setContentLengthLong(len);
		this.declaredLength = len;
	}

	@Override
	public void setHeader(String name, @Nullable String value) {
		super.setHeader(name, value);
		declared(name, value);
	}

	@Override
	public void addHeader(String name, @Nullable String value) {
		super.addHeader(name, value);
		declared(name, value);
	}

	@Override
	public void setContentType(@Nullable String type) {
		super.setContentType(type);
		streamIfStreamingType(type);
	}

	@Override
	public void setIntHeader(String name, int value) {
		super.setIntHeader(name, value);
		declared(name, Integer.toString(value));
	}

	@Override
	public void addIntHeader(String name, int value) {
		super.addIntHeader(name, value);
		declared(name, Integer.toString(value));
	}

	/**
	 * A response that declares a streaming type (server-sent events, NDJSON) streams once
	 * {@link #streamByContentType()} asked for it: a functional endpoint's
	 * {@code ServerResponse.sse} or streaming body has no return type to tell it by, as a
	 * handler method's has. Never while holding (a transactional response has no
	 * streaming form).
	 */
	private void streamIfStreamingType(@Nullable String type) {
		if (!this.streamsByType || this.capture != Capture.CAPTURING || type == null) {
			return;
		}
		String lower = type.toLowerCase(Locale.ROOT);
		if (lower.startsWith("text/event-stream") || lower.startsWith("application/x-ndjson")) {
			try {
				stopCapture();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
	}

	/** Follows the {@code Content-Length} header, which tells where the body ends. */
	private void declared(String name, @Nullable String value) {
		if ("Content-Type".equalsIgnoreCase(name)) {
			streamIfStreamingType(value);
		}
		if ("Content-Length".equalsIgnoreCase(name)) {
			try {
				this.declaredLength = (value != null) ? Long.parseLong(value.trim()) : -1;
			}
			catch (NumberFormatException ex) {
				this.declaredLength = -1;
			}
		}
	}

	@Override
	public void setBufferSize(int size) {
		if (!this.capture.capturing) {
			super.setBufferSize(size);
		}
	}

	@Override
	public void sendError(int sc) throws IOException {
		prepareForError();
		super.sendError(sc);
	}

	@Override
	public void sendError(int sc, String msg) throws IOException {
		prepareForError();
		super.sendError(sc, msg);
	}

	@Override
	public void sendRedirect(String location) throws IOException {
		if (this.capture == Capture.HOLDING) {
			holdRedirect(location, HttpServletResponse.SC_FOUND);
			return;
		}
		flushWriter();
		this.buffer.reset();
		dropHeldEnd();
		endCapture();
		super.sendRedirect(location);
	}

	@Override
	public void sendRedirect(String location, int sc, boolean clearBuffer) throws IOException {
		if (this.capture == Capture.HOLDING) {
			holdRedirect(location, sc);
			return;
		}
		flushWriter();
		this.buffer.reset();
		dropHeldEnd();
		endCapture();
		super.sendRedirect(location, sc, clearBuffer);
	}

	private void holdRedirect(String location, int status) {
		flushWriter();
		this.buffer.reset();
		setStatus(status);
		setHeader("Location", location);
	}

	private void prepareForError() {
		flushWriter();
		this.errorSent = true;
		this.buffer.reset();
		dropHeldEnd();
		// a held response must be whole when its transaction commits; the container
		// renders the error page after that, outside of the hold
		if (this.capture == Capture.HOLDING) {
			this.capture = Capture.ERROR_SENT_WHILE_HELD;
		}
		else {
			endCapture();
		}
	}

	/** Ends a running capture without a reason against storing what it holds. */
	private void endCapture() {
		if (this.capture.capturing) {
			this.capture = Capture.ENDED;
		}
	}

	/**
	 * Ends the capture, not running, for {@code reason}; the first reason stays (a later
	 * one is a consequence of the first: a body that overflowed and then streamed is too
	 * large first).
	 */
	private void to(Capture reason) {
		if (this.capture.reason == NotStoredReason.NONE) {
			this.capture = reason;
		}
	}

	/** Moves characters still inside this wrapper's own writer into the buffer. */
	private void flushWriter() {
		if (this.ownStreams && this.writer != null) {
			this.writer.flush();
		}
	}

	private void passThrough(Capture reason) throws IOException {
		to(reason);
		writeBuffer();
	}

	private void writeBuffer() throws IOException {
		if (this.buffer.size() > 0) {
			passOn(this.buffer.array(), 0, this.buffer.size());
			this.buffer.reset();
		}
	}

	/**
	 * Writes body bytes to the wrapped response, but while the end is held not the byte
	 * that completes a declared {@code Content-Length} (nor any after it): with it the
	 * client would have the whole response.
	 */
	private void passOn(byte[] b, int off, int len) throws IOException {
		int through = len;
		if (this.endHeld && this.declaredLength >= 0) {
			through = (int) Math.max(0, Math.min(len, this.declaredLength - 1 - this.passedOn));
			this.passedOn += len;
			this.heldEnd.write(b, off + through, len - through);
		}
		if (through > 0) {
			getResponse().getOutputStream().write(b, off, through);
		}
	}

	/**
	 * Forgets the held end along with the body it ended (a reset, an error, a redirect).
	 */
	private void dropHeldEnd() {
		this.heldEnd.reset();
		this.passedOn = 0;
	}

	private static boolean containsIgnoreCase(Map<String, ?> map, String name) {
		String lower = name.toLowerCase(Locale.ROOT);
		return map.keySet().stream().anyMatch((key) -> key.toLowerCase(Locale.ROOT).equals(lower));
	}

	/**
	 * Where the capture of a response stands. Its first states run or have not begun; the
	 * others tell why it ended early, and stay once reached.
	 */
	private enum Capture {

		/** Not asked for (yet): everything passes through. */
		OFF(false, NotStoredReason.NONE, false),

		/** Body bytes are held back, up to the limit. */
		CAPTURING(true, NotStoredReason.NONE, false),

		/**
		 * Everything is held back, redirects too, whatever the size (a transactional
		 * request's response, which may not reach the client before its commit).
		 */
		HOLDING(true, NotStoredReason.NONE, false),

		/** Ended with nothing against storing: written out, discarded or redirected. */
		ENDED(false, NotStoredReason.NONE, false),

		/** Something wrote or committed the response before capture was asked for. */
		NOT_STARTED(false, NotStoredReason.NOT_CAPTURED, true),

		/**
		 * {@code sendError} while held: the container renders the body after the hold.
		 */
		ERROR_SENT_WHILE_HELD(false, NotStoredReason.ERROR_PAGE, true),

		/** The response turned out to stream. */
		STREAMED(false, NotStoredReason.STREAMING, true),

		/** The body outgrew the limit and went through as written. */
		OVERFLOWED(false, NotStoredReason.TOO_LARGE, false),

		/** The buffer budget had no room: the body went through as written. */
		OVER_BUDGET(false, NotStoredReason.OVER_BUDGET, false);

		final boolean capturing;

		final NotStoredReason reason;

		/** Whether what was captured cannot be judged at all, so its status is not. */
		final boolean reasonBeforeStatus;

		Capture(boolean capturing, NotStoredReason reason, boolean reasonBeforeStatus) {
			this.capturing = capturing;
			this.reason = reason;
			this.reasonBeforeStatus = reasonBeforeStatus;
		}

	}

	/** The held-back body, readable in place so that the envelope is encoded from it. */
	private static final class HeldBody extends ByteArrayOutputStream {

		byte[] array() {
			return this.buf;
		}

		int capacity() {
			return this.buf.length;
		}

	}

	private final class CapturingOutputStream extends ServletOutputStream {

		@Override
		public void write(int b) throws IOException {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			CapturingResponse response = CapturingResponse.this;
			if (response.capture.capturing && response.buffer.size() + (long) len > response.limit) {
				response.passThrough(Capture.OVERFLOWED);
			}
			long size = response.buffer.size() + (long) len;
			// within what is reserved already (most writes): no lock
			if (response.capture.capturing && size > response.reserved && !response.reserve(size)) {
				response.passThrough(Capture.OVER_BUDGET);
			}
			if (response.capture.capturing) {
				response.buffer.write(b, off, len);
			}
			else {
				response.passOn(b, off, len);
			}
		}

		@Override
		public void flush() throws IOException {
			if (!CapturingResponse.this.capture.capturing) {
				CapturingResponse.this.getResponse().getOutputStream().flush();
			}
		}

		@Override
		public void close() throws IOException {
			// while the end is held, the container closes the stream when the response
			// ends, after the key was stored or released
			if (!CapturingResponse.this.capture.capturing && !CapturingResponse.this.endHeld) {
				CapturingResponse.this.getResponse().getOutputStream().close();
			}
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setWriteListener(WriteListener listener) {
			try {
				CapturingResponse.this.getResponse().getOutputStream().setWriteListener(listener);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

}
