package dev.idempo.web;

import java.net.URI;

import org.springframework.http.HttpStatus;

/**
 * The errors idempo answers with, each an {@code application/problem+json} body (RFC
 * 9457) with a stable {@code type}.
 *
 * @author idempo
 */
public enum IdempotencyProblem {

	/**
	 * The key header is empty, too long, badly quoted, not ASCII, or sent more than once.
	 */
	INVALID_KEY(HttpStatus.BAD_REQUEST, "invalid-key", "Invalid idempotency key"),

	/** The handler requires a key and the request has none. */
	MISSING_KEY(HttpStatus.BAD_REQUEST, "missing-key", "Idempotency key required"),

	/** The key was used before with a different request (method, path, query or body). */
	KEY_REUSED(HttpStatus.UNPROCESSABLE_CONTENT, "key-reused", "Idempotency key reused with a different request"),

	/** Another request with the same key is still being processed. */
	IN_PROGRESS(HttpStatus.CONFLICT, "request-in-progress", "A request with this idempotency key is in progress"),

	/**
	 * The body is larger than {@code idempo.max-request-size}, too large to fingerprint.
	 */
	REQUEST_TOO_LARGE(HttpStatus.CONTENT_TOO_LARGE, "request-too-large", "Request too large for an idempotency key"),

	/** The idempotency store could not be reached; the handler did not run. */
	STORE_UNAVAILABLE(HttpStatus.SERVICE_UNAVAILABLE, "store-unavailable", "Idempotency store unavailable"),

	/**
	 * Holding the request's body would exceed what idempo may hold of all request bodies
	 * at once ({@code idempo.max-buffered-size}); the handler did not run.
	 */
	SERVER_BUSY(HttpStatus.SERVICE_UNAVAILABLE, "server-busy", "Too many large idempotent requests at once"),

	/**
	 * A transactional handler ran, but its transaction could not be committed, or it is
	 * unknown whether it was (the connection was lost while committing). A retry with the
	 * same key replays the response if it committed and runs the handler if it did not.
	 */
	COMMIT_FAILED(HttpStatus.SERVICE_UNAVAILABLE, "commit-failed", "Transaction not committed"),

	/**
	 * Replayed for a key whose transactional handler committed a response that is not
	 * replayable (larger than {@code idempo.max-response-size}): the request was
	 * processed, but its response cannot be sent again.
	 */
	RESPONSE_NOT_REPLAYABLE(HttpStatus.GONE, "response-not-replayable",
			"The response of this idempotent request cannot be replayed");

	/** The prefix of every problem type. */
	public static final String TYPE_PREFIX = "https://idempo.dev/problems/";

	private final HttpStatus status;

	private final URI type;

	private final String title;

	IdempotencyProblem(HttpStatus status, String slug, String title) {
		this.status = status;
		this.type = URI.create(TYPE_PREFIX + slug);
		this.title = title;
	}

	/**
	 * The HTTP status.
	 * @return the status
	 */
	public HttpStatus status() {
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
