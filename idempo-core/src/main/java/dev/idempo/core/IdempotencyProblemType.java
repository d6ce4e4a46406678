package dev.idempo.core;

import java.net.URI;

/**
 * The errors idempo's request flows answer with, whatever the web stack: each an
 * {@code application/problem+json} body (RFC 9457) with a stable {@code type}, a title
 * and an HTTP status. Spring MVC's {@code dev.idempo.web.IdempotencyProblem} and the
 * WebFlux flow both take them from here, so that a client sees the same problem from
 * either.
 *
 * @author idempo
 */
public enum IdempotencyProblemType {

	/**
	 * The key header is empty, too long, badly quoted, not ASCII, or sent more than once.
	 */
	INVALID_KEY(400, "invalid-key", "Invalid idempotency key"),

	/** The handler requires a key and the request has none. */
	MISSING_KEY(400, "missing-key", "Idempotency key required"),

	/** The key was used before with a different request (method, path, query or body). */
	KEY_REUSED(422, "key-reused", "Idempotency key reused with a different request"),

	/** Another request with the same key is still being processed. */
	IN_PROGRESS(409, "request-in-progress", "A request with this idempotency key is in progress"),

	/**
	 * The body is larger than {@code idempo.max-request-size}, too large to fingerprint.
	 */
	REQUEST_TOO_LARGE(413, "request-too-large", "Request too large for an idempotency key"),

	/** The idempotency store could not be reached; the handler did not run. */
	STORE_UNAVAILABLE(503, "store-unavailable", "Idempotency store unavailable"),

	/**
	 * Holding the request's body would exceed what idempo may hold of all request bodies
	 * at once ({@code idempo.max-buffered-size}); the handler did not run.
	 */
	SERVER_BUSY(503, "server-busy", "Too many large idempotent requests at once"),

	/**
	 * A transactional handler ran, but its transaction could not be committed, or it is
	 * unknown whether it was.
	 */
	COMMIT_FAILED(503, "commit-failed", "Transaction not committed"),

	/**
	 * Replayed for a key whose transactional handler committed a response that is not
	 * replayable.
	 */
	RESPONSE_NOT_REPLAYABLE(410, "response-not-replayable",
			"The response of this idempotent request cannot be replayed");

	/** The prefix of every problem type. */
	public static final String TYPE_PREFIX = "https://idempo.dev/problems/";

	private final int status;

	private final URI type;

	private final String title;

	IdempotencyProblemType(int status, String slug, String title) {
		this.status = status;
		this.type = URI.create(TYPE_PREFIX + slug);
		this.title = title;
	}

	/**
	 * The HTTP status code.
	 * @return the status code
	 */
	public int status() {
		return this.status;
	}

	/**
	 * The problem type URI.
	 * @return the type
	 */
	public URI type() {
		return this.type;
	}

	/**
	 * The problem title.
	 * @return the title
	 */
	public String title() {
		return this.title;
	}

}
