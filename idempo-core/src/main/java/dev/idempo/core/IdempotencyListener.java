package dev.idempo.core;

/**
 * Receives what happens to protected requests, for metrics. Every method has a no-op
 * default. Methods are called on the request thread (or the thread that finishes an
 * asynchronous request) and must be fast; an exception thrown here is logged and never
 * breaks the request.
 *
 * @author idempo
 */
public interface IdempotencyListener {

	/** A listener that does nothing. */
	IdempotencyListener NONE = new IdempotencyListener() {
	};

	/**
	 * A protected request was decided before or instead of running the handler.
	 * @param outcome what happened
	 */
	default void onRequest(RequestOutcome outcome) {
	}

	/**
	 * A protected request whose handler ran has finished.
	 * @param outcome what happened to its response
	 * @param reason why it was not stored, {@link NotStoredReason#NONE} if it was
	 */
	default void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
	}

	/**
	 * A protected call of any source was decided before or instead of running its work.
	 * By default passed on to {@link #onRequest(RequestOutcome)}, which sees web requests
	 * and method calls alike.
	 * @param source what was protected: a web request, an {@code @Idempotent} method or
	 * an {@code IdempotencyTemplate} call
	 * @param outcome what happened
	 */
	default void onRequest(Source source, RequestOutcome outcome) {
		onRequest(outcome);
	}

	/**
	 * A protected call of any source whose work ran has finished. By default passed on to
	 * {@link #onResponse(ResponseOutcome, NotStoredReason)}.
	 * @param source what was protected
	 * @param outcome what happened to its result
	 * @param reason why it was not stored, {@link NotStoredReason#NONE} if it was
	 */
	default void onResponse(Source source, ResponseOutcome outcome, NotStoredReason reason) {
		onResponse(outcome, reason);
	}

	/**
	 * A store operation finished.
	 * @param store the store name
	 * @param operation the operation
	 * @param nanos how long it took
	 * @param success whether it returned rather than threw
	 */
	default void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
	}

	/**
	 * What a protected call is: the {@code source} tag of the metrics.
	 */
	enum Source {

		/** A request to an {@code @Idempotent} web handler. */
		WEB,

		/** A call of an {@code @Idempotent(key = ...)} bean method. */
		METHOD,

		/** A call of the {@code IdempotencyTemplate}. */
		TEMPLATE;

		private final String tag = name().toLowerCase(java.util.Locale.ROOT);

		/**
		 * The metric tag value.
		 * @return the lowercase name
		 */
		public String tag() {
			return this.tag;
		}

	}

	/**
	 * What happened to a protected request before its handler.
	 */
	enum RequestOutcome {

		/** The key was claimed and the handler runs. */
		EXECUTED,

		/** A stored response was replayed. */
		REPLAYED,

		/**
		 * Another request held the key: 409 (a method call:
		 * {@code IdempotencyInProgressException}).
		 */
		CONFLICT,

		/**
		 * The key was reused with a different request: 422 (a method call:
		 * {@code IdempotencyKeyReusedException}).
		 */
		MISMATCH,

		/** The key header was unusable: 400. */
		INVALID_KEY,

		/** A required key was missing: 400. */
		MISSING_KEY,

		/** The body was too large to fingerprint: 413. */
		REQUEST_TOO_LARGE,

		/** The store failed and the request was refused: 503. */
		STORE_ERROR,

		/**
		 * Holding the body would exceed {@code idempo.max-buffered-size}: 503 before it
		 * was read.
		 */
		BUSY,

		/** The store failed and the handler ran unprotected (fail-open). */
		UNPROTECTED;

		private final String tag = name().toLowerCase(java.util.Locale.ROOT);

		/**
		 * The metric tag value.
		 * @return the lowercase name
		 */
		public String tag() {
			return this.tag;
		}

	}

	/**
	 * What happened to the response of a handler that ran under a claim.
	 */
	enum ResponseOutcome {

		/** Stored; later requests with the key replay it. */
		STORED,

		/** Not stored (see the reason); the key was released. */
		NOT_STORED,

		/**
		 * The claim was lost while the handler ran (lease expired or lock session died).
		 */
		LOCK_LOST,

		/** The store failed while storing or releasing. */
		STORE_ERROR;

		private final String tag = name().toLowerCase(java.util.Locale.ROOT);

		/**
		 * The metric tag value.
		 * @return the lowercase name
		 */
		public String tag() {
			return this.tag;
		}

	}

	/**
	 * Why a response was not stored.
	 */
	enum NotStoredReason {

		/** It was stored. */
		NONE,

		/**
		 * A status that {@code idempo.responses} does not store (by default 5xx, 408, 425
		 * and 429).
		 */
		STATUS,

		/** The body exceeded {@code idempo.max-response-size}. */
		TOO_LARGE,

		/**
		 * The instance's buffer budget ({@code idempo.max-buffered-size}) had no room to
		 * hold the body while other requests held theirs.
		 */
		OVER_BUDGET,

		/** A streaming response. */
		STREAMING,

		/** {@code @Idempotent(cacheResponse = false)}. */
		DISABLED,

		/** An exception escaped the handler. */
		EXCEPTION,

		/**
		 * The response could not be captured: something wrote to or committed it before
		 * the handler ran.
		 */
		NOT_CAPTURED,

		/**
		 * An asynchronous request timed out or failed while its work may still run; the
		 * key stays claimed until the work ends (a {@code Callable}) or the claim lapses.
		 */
		ASYNC_TIMEOUT,

		/**
		 * {@code sendError} was called and no error page followed that could be stored.
		 */
		ERROR_PAGE,

		/**
		 * An {@code IdempotentResponseFilter} refused to store it, or the handler opted
		 * out with {@code IdempotentResponse.doNotStore()}.
		 */
		REFUSED,

		/**
		 * Spring MVC answered before the handler method began, while it resolved the
		 * handler's arguments (an unreadable or invalid body, an unsupported media type,
		 * a missing or unconvertible parameter, a failed {@code @Valid}): the handler did
		 * nothing, so the corrected retry with the same key runs it.
		 */
		REJECTED_BEFORE_HANDLER,

		/** A method's result could not be written as JSON. */
		UNSERIALIZABLE,

		/**
		 * The caller went away before the result was stored: a cancelled subscription or
		 * future, or a client that disconnected from a reactive request.
		 */
		CANCELLED;

		private final String tag = name().toLowerCase(java.util.Locale.ROOT);

		/**
		 * The metric tag value.
		 * @return the lowercase name
		 */
		public String tag() {
			return this.tag;
		}

	}

	/**
	 * A {@link dev.idempo.store.LockingStore} operation.
	 */
	enum StoreOperation {

		/** Claim or fetch. */
		CLAIM,

		/** Store and release. */
		COMPLETE,

		/** Release without storing. */
		RELEASE,

		/** Lease renewal. */
		RENEW;

		private final String tag = name().toLowerCase(java.util.Locale.ROOT);

		/**
		 * The metric tag value.
		 * @return the lowercase name
		 */
		public String tag() {
			return this.tag;
		}

	}

}
