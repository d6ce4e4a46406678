package dev.idempo.web;

import java.security.MessageDigest;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.Digests;

/**
 * A request body digested as it streams past, for a body whose length was declared
 * ({@code Content-Length}) before it arrived: the handler reads it as sent, nothing of it
 * is held, and what the handler left unread is digested as it is discarded
 * ({@link BufferedBodyRequest#finishStream}).
 * <p>
 * Two digests come out of it. The <em>whole</em> one, once the body ended cleanly: every
 * byte the application saw, after the fields that the declared length prefixes (a filter
 * that rewrites the body without changing the declared length gets the same digest for
 * the same request every time). The <em>prefix</em> one, of the bytes up to a
 * {@linkplain #markPrefix mark}: what a handler read before its response, kept for a body
 * that then ends short (the client went away while the rest was discarded), so that a
 * retry whose first bytes are the same can be matched with it.
 *
 * @author idempo
 */
final class StreamedBody {

	private final MessageDigest digest;

	private final long declaredLength;

	private long count;

	/**
	 * The flow reads the rest of the body: failures from here on are not the
	 * application's.
	 */
	private boolean draining;

	/** A read the application made failed, or ended short of the declared length. */
	private boolean applicationReadFailed;

	/** The whole body's digest, once it ended cleanly. */
	private @Nullable String whole;

	/** Reading the body failed, or went past the limit: it never ends cleanly. */
	private boolean failed;

	private long prefixLength = -1;

	private @Nullable MessageDigest prefix;

	private @Nullable String prefixHex;

	/**
	 * Creates a body digest.
	 * @param digest the digest, with everything before the body already added
	 * @param declaredLength the body's declared length
	 */
	StreamedBody(MessageDigest digest, long declaredLength) {
		this.digest = digest;
		this.declaredLength = declaredLength;
	}

	synchronized void update(byte[] bytes, int offset, int length) {
		if (this.whole != null || length <= 0) {
			return;
		}
		if (this.prefixLength >= 0 && this.prefix == null && this.count + length >= this.prefixLength) {
			int head = (int) (this.prefixLength - this.count);
			this.digest.update(bytes, offset, head);
			this.prefix = copy(this.digest);
			this.digest.update(bytes, offset + head, length - head);
		}
		else {
			this.digest.update(bytes, offset, length);
		}
		this.count += length;
	}

	void update(int b) {
		update(new byte[] { (byte) b }, 0, 1);
	}

	/**
	 * The number of body bytes digested so far.
	 * @return the count
	 */
	synchronized long count() {
		return this.count;
	}

	/**
	 * Whether fewer bytes than declared were digested.
	 * @return whether the body is short so far
	 */
	synchronized boolean isShort() {
		return this.count < this.declaredLength;
	}

	/**
	 * The flow starts reading what the application left: marks the prefix digest at the
	 * bytes the application read, unless a mark was set.
	 */
	synchronized void startDraining() {
		this.draining = true;
		if (this.prefixLength < 0) {
			this.prefixLength = this.count;
			this.prefix = copy(this.digest);
		}
	}

	/** A read that the application made failed (unless the flow was draining). */
	synchronized void applicationReadFailed() {
		if (!this.draining) {
			this.applicationReadFailed = true;
		}
	}

	/**
	 * Whether a read that the application made failed: what it answered was not an answer
	 * to the body.
	 * @return whether it failed
	 */
	synchronized boolean hasApplicationReadFailed() {
		return this.applicationReadFailed;
	}

	/**
	 * Marks the end of the prefix digest: the first {@code length} bytes.
	 * @param length the prefix's length
	 * @return {@code false} if more bytes than that were digested already, or another
	 * mark was set: the prefix cannot be had
	 */
	synchronized boolean markPrefix(long length) {
		if (this.prefixLength >= 0) {
			return this.prefixLength == length;
		}
		if (this.count > length) {
			return false;
		}
		this.prefixLength = length;
		if (this.count == length) {
			this.prefix = copy(this.digest);
		}
		return true;
	}

	/**
	 * Whether the digest is settled, ended or failed: nothing more is read for it.
	 * @return whether it is settled
	 */
	synchronized boolean isSettled() {
		return this.whole != null || this.failed;
	}

	/** The body ended cleanly: every byte was digested. */
	synchronized void ended() {
		if (!this.failed && this.whole == null) {
			this.whole = Digests.hex(this.digest);
		}
	}

	/** Reading the body failed (the client went away or stalled, or it is too long). */
	synchronized void fail() {
		if (this.whole == null) {
			this.failed = true;
		}
	}

	/**
	 * The whole body's digest.
	 * @return it, or {@code null} if the body did not end cleanly
	 */
	synchronized @Nullable String whole() {
		return this.whole;
	}

	/**
	 * The prefix's digest.
	 * @return it, or {@code null} if no mark was set or fewer bytes arrived
	 */
	synchronized @Nullable String prefix() {
		if (this.prefixHex == null && this.prefix != null) {
			this.prefixHex = Digests.hex(this.prefix);
		}
		return this.prefixHex;
	}

	/**
	 * The length the prefix was marked at.
	 * @return it, or {@code -1}
	 */
	synchronized long prefixLength() {
		return this.prefixLength;
	}

	private static MessageDigest copy(MessageDigest digest) {
		try {
			return (MessageDigest) digest.clone();
		}
		catch (CloneNotSupportedException ex) {
			throw new IllegalStateException("The fingerprint digest cannot be copied", ex);
		}
	}

}
