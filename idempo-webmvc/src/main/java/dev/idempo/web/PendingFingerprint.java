package dev.idempo.web;

import org.jspecify.annotations.Nullable;

/**
 * A request's fingerprint, known before the handler runs (a body held whole, or no body
 * to wait for) or only once its streamed body was read to the end: the flow asks for it
 * when it must compare it with a stored record or store it with the response, and never
 * for a request that meets its key in progress.
 *
 * @author idempo
 */
@FunctionalInterface
interface PendingFingerprint {

	/**
	 * The fingerprint stored for a handler that ran on a body which then ended short of
	 * its declared length: not hexadecimal, so no request's fingerprint ever equals it.
	 */
	String INCOMPLETE_BODY = "incomplete-body";

	/**
	 * The fingerprint, reading what is left of a streamed body first; called on a thread
	 * that may read the request (a dispatch of it).
	 * @return the fingerprint, or {@code null} if the body could not be read whole
	 */
	@Nullable String get();

	/**
	 * A fingerprint known now.
	 * @param fingerprint the fingerprint
	 * @return it, pending nothing
	 */
	static PendingFingerprint of(String fingerprint) {
		return () -> fingerprint;
	}

}
