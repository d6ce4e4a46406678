package dev.idempo.web;

import java.security.MessageDigest;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.Digests;

/**
 * A request body digested as it streams past, for a body whose length was declared
 * ({@code Content-Length}) before it arrived: the handler reads it as sent, nothing of it
 * is held, and what the handler left unread is digested as it is discarded
 * ({@link BufferedBodyRequest#finishStream}). The digest is the request's fingerprint
 * only if exactly the declared bytes arrived.
 *
 * @author idempo
 */
final class StreamedBody {

	private final MessageDigest digest;

	private final long declaredLength;

	private long count;

	private @Nullable String fingerprint;

	/** Whether reading the rest failed: the body is incomplete for good. */
	private boolean failed;

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
		if (this.fingerprint == null) {
			this.digest.update(bytes, offset, length);
			this.count += length;
		}
	}

	synchronized void update(int b) {
		if (this.fingerprint == null) {
			this.digest.update((byte) b);
			this.count++;
		}
	}

	/**
	 * Whether the digest is settled, complete or failed: nothing more is read for it.
	 * @return whether it is settled
	 */
	synchronized boolean isSettled() {
		return this.fingerprint != null || this.failed;
	}

	/** Reading the rest of the body failed (the client went away or stalled). */
	synchronized void fail() {
		this.failed = true;
	}

	/**
	 * Whether more bytes arrived than were declared.
	 * @return whether the body is longer than declared
	 */
	synchronized boolean isOverDeclared() {
		return this.count > this.declaredLength;
	}

	/**
	 * Completes the digest, once every byte was read.
	 * @return the fingerprint, or {@code null} if the body did not have its declared
	 * length (the client went away, or a wrapper changed the body)
	 */
	synchronized @Nullable String complete() {
		if (this.fingerprint == null) {
			if (this.failed || this.count != this.declaredLength) {
				return null;
			}
			this.fingerprint = Digests.hex(this.digest);
		}
		return this.fingerprint;
	}

}
