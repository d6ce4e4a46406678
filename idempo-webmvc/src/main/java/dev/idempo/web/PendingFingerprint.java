package dev.idempo.web;

/**
 * A request's fingerprint, known before the handler runs (a body held whole, or no body
 * to wait for) or only once its streamed body was read to the end
 * ({@link StreamedFingerprint}): the flow asks for it when it must compare it with a
 * stored record or store it with the response, and never for a request that meets its key
 * in progress.
 *
 * @author idempo
 */
interface PendingFingerprint {

	/**
	 * The fingerprint to store with the handler's response, reading what is left of a
	 * streamed body first; called on a thread that may read the request (a dispatch of
	 * it).
	 * @return the fingerprint
	 */
	String get();

	/**
	 * Whether a stored record's fingerprint is this request's, reading what is left of a
	 * streamed body first.
	 * @param stored the record's fingerprint
	 * @return whether it matches
	 */
	default boolean matches(String stored) {
		return stored.equals(get());
	}

	/**
	 * Whether asking for the fingerprint reads the body, which the handler then cannot
	 * read.
	 * @return whether the body is consumed
	 */
	default boolean consumesBody() {
		return false;
	}

	/**
	 * Whether reading the body failed while the application read it (the client went
	 * away, or the body ended short of its declared length): the handler's answer is not
	 * one to the request, and is not stored.
	 * @return whether the body failed under the application
	 */
	default boolean bodyFailed() {
		return false;
	}

	/**
	 * A fingerprint known now.
	 * @param fingerprint the fingerprint
	 * @return it, pending nothing
	 */
	static PendingFingerprint of(String fingerprint) {
		return () -> fingerprint;
	}

}
