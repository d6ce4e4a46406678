package dev.idempo.flow;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.IdempotencyKeyParser;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.RequestOutcome;
import dev.idempo.core.IdempotencyProblemType;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.IdempotentRoute;
import dev.idempo.core.InvalidIdempotencyKeyException;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.flow.ClaimMode.Claim;
import dev.idempo.store.StoredRecord;

/**
 * What a protected request's key and claim decide, once for every entry point: which
 * requests take part, the key (or why the request is refused), what a claim's outcome
 * means (replay, 422, 409, run), what a store failure means (run unprotected, or 503),
 * and whether a response is stored. The decisions are values; each entry point (the
 * Spring MVC interceptor, the WebFlux and gateway filters, idempotent methods) turns its
 * request into their input and their values into its own answer: a response written on a
 * servlet or a reactive exchange, an exception of a method. The claims themselves are
 * made by a {@link ClaimMode} (blocking) or the {@link ReactiveClaimMode}.
 * <p>
 * Thread-safe and stateless but for the settings.
 *
 * @author idempo
 */
public final class RequestFlow {

	/**
	 * The methods whose requests take part; others pass through untouched. The same set
	 * {@code idempo.routes} matches ({@link IdempotentRoute#PROTECTED_METHODS}).
	 */
	public static final Set<String> PROTECTED_METHODS = IdempotentRoute.PROTECTED_METHODS;

	private final IdempotencySettings settings;

	/**
	 * Creates the flow of a configuration.
	 * @param settings the settings (key header, conflict and store-failure answers)
	 */
	public RequestFlow(IdempotencySettings settings) {
		this.settings = settings;
	}

	/**
	 * Whether a request with {@code method} takes part (POST, PATCH, PUT, DELETE), even
	 * on a protected handler.
	 * @param method the HTTP method
	 * @return whether it takes part
	 */
	public static boolean takesPart(String method) {
		return PROTECTED_METHODS.contains(method);
	}

	/**
	 * The settings the flow decides by.
	 * @return the settings
	 */
	public IdempotencySettings settings() {
		return this.settings;
	}

	/**
	 * Reads the key from the values of the key header and its aliases.
	 * @param keyHeaderValues every value of every key header, in order
	 * @param required whether the handler requires a key (the global requirement is
	 * added)
	 * @return the key, no key (the request passes through), or a 400
	 */
	public KeyOutcome key(List<String> keyHeaderValues, boolean required) {
		String key;
		try {
			key = IdempotencyKeyParser.parse(keyHeaderValues);
		}
		catch (InvalidIdempotencyKeyException ex) {
			return new Rejection(RequestOutcome.INVALID_KEY, IdempotencyProblemType.INVALID_KEY, ex.getMessage() + ".",
					null);
		}
		if (key != null) {
			return new Keyed(key);
		}
		if (required || this.settings.keyRequired()) {
			return new Rejection(RequestOutcome.MISSING_KEY, IdempotencyProblemType.MISSING_KEY,
					"This endpoint requires an " + this.settings.keyHeader() + " header.", null);
		}
		return NoKey.INSTANCE;
	}

	/**
	 * What a claim's outcome decides: a completed record of the same request is replayed,
	 * one of another request is a 422, a key in progress a 409, a claim held runs the
	 * work.
	 * @param <H> the hold of the claim's mode
	 * @param claim what the claim found
	 * @param sameRequest whether a record's fingerprint is this request's (where it is
	 * streamed, testing it may read the rest of the body)
	 * @param fingerprintHeaders the request headers the fingerprint covers, named in the
	 * 422's detail
	 * @return the decision
	 */
	public <H> Decision<H> decide(Claim<H> claim, Predicate<String> sameRequest, List<String> fingerprintHeaders) {
		if (claim instanceof ClaimMode.Held<H> held) {
			return new Execute<>(held.hold());
		}
		if (claim instanceof ClaimMode.Replay<H> replay) {
			StoredRecord record = replay.record();
			return sameRequest.test(record.fingerprint()) ? new Replay<>(record)
					: new Reject<>(keyReused(fingerprintHeaders));
		}
		return new Reject<>(new Rejection(RequestOutcome.CONFLICT, IdempotencyProblemType.IN_PROGRESS,
				"A request with the same idempotency key is still being processed; retry later.",
				this.settings.conflictRetryAfter()));
	}

	/**
	 * Whether {@link #decide} needs the request's fingerprint for {@code claim}: only to
	 * compare it with a completed record's. An entry point whose fingerprint is known
	 * only once a streamed body was read to its end (a non-blocking one, which cannot
	 * read it inside {@code decide}'s predicate) reads it for such a claim first, and
	 * never for a key in progress or a claim held.
	 * @param claim what the claim found
	 * @return whether the decision compares fingerprints
	 */
	public boolean comparesFingerprint(Claim<?> claim) {
		return claim instanceof ClaimMode.Replay<?>;
	}

	/**
	 * What a store failure decides (the claim failed, or the record it found cannot be
	 * read): the work runs unprotected where the mode fails open, else the request is
	 * refused with 503.
	 * @param <H> the hold of the claim's mode
	 * @param failsOpen whether the mode fails open
	 * @return {@link Unprotected} or a {@link Reject} of {@link #storeUnavailable()}
	 */
	public <H> Decision<H> storeFailed(boolean failsOpen) {
		return failsOpen ? new Unprotected<>() : new Reject<>(storeUnavailable());
	}

	/**
	 * The 503 of a request refused because the store failed.
	 * @return the rejection
	 */
	public Rejection storeUnavailable() {
		return new Rejection(RequestOutcome.STORE_ERROR, IdempotencyProblemType.STORE_UNAVAILABLE,
				"The idempotency store is unavailable; the request was not processed. Retry later.",
				this.settings.storeFailureRetryAfter());
	}

	/**
	 * The 413 of a body larger than an idempotent request may send.
	 * @param maxSize the limit
	 * @return the rejection
	 */
	public Rejection tooLarge(long maxSize) {
		return new Rejection(RequestOutcome.REQUEST_TOO_LARGE, IdempotencyProblemType.REQUEST_TOO_LARGE,
				"The request body is larger than " + maxSize + " bytes, the most an idempotent request may send.",
				null);
	}

	/**
	 * Why a whole response is not stored, or {@code NONE}: a reason known before the
	 * response (the handler does not store, the response streams), else a status that is
	 * not stored, else a body larger than {@code idempo.max-response-size}.
	 * @param preset the reason known before the response, or {@code NONE}
	 * @param responses which statuses are stored
	 * @param status the response's status
	 * @param size the body's length
	 * @return the reason
	 */
	public NotStoredReason notStored(NotStoredReason preset, ResponseStoragePolicy responses, int status, long size) {
		if (preset != NotStoredReason.NONE) {
			return preset;
		}
		if (!responses.isStored(status)) {
			return NotStoredReason.STATUS;
		}
		return (size > this.settings.maxResponseSize()) ? NotStoredReason.TOO_LARGE : NotStoredReason.NONE;
	}

	private static Rejection keyReused(List<String> fingerprintHeaders) {
		return new Rejection(RequestOutcome.MISMATCH, IdempotencyProblemType.KEY_REUSED,
				"This idempotency key was already used with a different request (method, path, query or body"
						+ (fingerprintHeaders.isEmpty() ? ""
								: ", or the value of " + String.join(", ", fingerprintHeaders))
						+ ").",
				null);
	}

	/**
	 * What the key headers of a request say.
	 */
	public sealed interface KeyOutcome permits NoKey, Keyed, Rejection {

	}

	/**
	 * No key, and none required: the request passes through unprotected.
	 */
	public static final class NoKey implements KeyOutcome {

		static final NoKey INSTANCE = new NoKey();

		private NoKey() {
		}

	}

	/**
	 * The request's key.
	 *
	 * @param key the key, 1 to 255 printable ASCII characters
	 */
	public record Keyed(String key) implements KeyOutcome {
	}

	/**
	 * A request refused before its work runs: what it is counted as, and the problem it
	 * is answered with.
	 *
	 * @param outcome the request outcome counted
	 * @param problem the problem (its status and type)
	 * @param detail the problem's detail
	 * @param retryAfter the {@code Retry-After} to send, or {@code null}
	 */
	public record Rejection(RequestOutcome outcome, IdempotencyProblemType problem, String detail,
			@Nullable Duration retryAfter) implements KeyOutcome {
	}

	/**
	 * What the claim (or its failure) decides.
	 *
	 * @param <H> the hold of the claim's mode
	 */
	public sealed interface Decision<H> permits Replay, Execute, Reject, Unprotected {

	}

	/**
	 * A completed record of the same request: replayed, the work does not run.
	 *
	 * @param <H> the hold of the claim's mode
	 * @param record the record
	 */
	public record Replay<H>(StoredRecord record) implements Decision<H> {
	}

	/**
	 * The key is held: the work runs, and the hold ends it.
	 *
	 * @param <H> the hold of the claim's mode
	 * @param hold the hold
	 */
	public record Execute<H>(H hold) implements Decision<H> {
	}

	/**
	 * The request is refused.
	 *
	 * @param <H> the hold of the claim's mode
	 * @param rejection why, and its answer
	 */
	public record Reject<H>(Rejection rejection) implements Decision<H> {
	}

	/**
	 * The store failed and the mode fails open: the work runs without protection.
	 *
	 * @param <H> the hold of the claim's mode
	 */
	public record Unprotected<H>() implements Decision<H> {
	}

}
