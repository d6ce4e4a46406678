package dev.idempo.web;

import java.net.URI;

import dev.idempo.core.IdempotencyProblemType;

import org.springframework.http.HttpStatus;

/**
 * The errors idempo answers with, each an {@code application/problem+json} body (RFC
 * 9457) with a stable {@code type}. Each is the Spring MVC face of an
 * {@link IdempotencyProblemType}, which the WebFlux flow answers with too.
 *
 * @author idempo
 */
public enum IdempotencyProblem {

	/**
	 * The key header is empty, too long, badly quoted, not ASCII, or sent more than once.
	 */
	INVALID_KEY(IdempotencyProblemType.INVALID_KEY),

	/** The handler requires a key and the request has none. */
	MISSING_KEY(IdempotencyProblemType.MISSING_KEY),

	/** The key was used before with a different request (method, path, query or body). */
	KEY_REUSED(IdempotencyProblemType.KEY_REUSED),

	/** Another request with the same key is still being processed. */
	IN_PROGRESS(IdempotencyProblemType.IN_PROGRESS),

	/**
	 * The body is larger than {@code idempo.max-request-size}, too large to fingerprint.
	 */
	REQUEST_TOO_LARGE(IdempotencyProblemType.REQUEST_TOO_LARGE),

	/** The idempotency store could not be reached; the handler did not run. */
	STORE_UNAVAILABLE(IdempotencyProblemType.STORE_UNAVAILABLE),

	/**
	 * Holding the request's body would exceed what idempo may hold of all request bodies
	 * at once ({@code idempo.max-buffered-size}); the handler did not run.
	 */
	SERVER_BUSY(IdempotencyProblemType.SERVER_BUSY),

	/**
	 * A transactional handler ran, but its transaction could not be committed, or it is
	 * unknown whether it was (the connection was lost while committing). A retry with the
	 * same key replays the response if it committed and runs the handler if it did not.
	 */
	COMMIT_FAILED(IdempotencyProblemType.COMMIT_FAILED),

	/**
	 * Replayed for a key whose transactional handler committed a response that is not
	 * replayable (larger than {@code idempo.max-response-size}): the request was
	 * processed, but its response cannot be sent again.
	 */
	RESPONSE_NOT_REPLAYABLE(IdempotencyProblemType.RESPONSE_NOT_REPLAYABLE);

	/** The prefix of every problem type. */
	public static final String TYPE_PREFIX = IdempotencyProblemType.TYPE_PREFIX;

	private final IdempotencyProblemType neutral;

	private final HttpStatus status;

	IdempotencyProblem(IdempotencyProblemType neutral) {
		this.neutral = neutral;
		this.status = HttpStatus.valueOf(neutral.status());
	}

	/**
	 * The problem of a stack-neutral type.
	 * @param neutral the type
	 * @return its problem
	 */
	public static IdempotencyProblem of(IdempotencyProblemType neutral) {
		for (IdempotencyProblem problem : values()) {
			if (problem.neutral == neutral) {
				return problem;
			}
		}
		throw new IllegalArgumentException("No problem of type " + neutral);
	}

	/**
	 * The same problem as every web stack answers it.
	 * @return the stack-neutral problem
	 */
	public IdempotencyProblemType neutral() {
		return this.neutral;
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
		return this.neutral.type();
	}

	/**
	 * The problem title.
	 * @return the title
	 */
	public String title() {
		return this.neutral.title();
	}

}
