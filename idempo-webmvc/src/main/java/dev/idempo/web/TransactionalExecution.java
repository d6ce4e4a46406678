package dev.idempo.web;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.flow.ClaimMode;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.store.StoredRecord;
import dev.idempo.transaction.TransactionalClaimMode.TransactionalHold;

/**
 * One request of a transactional handler, from its claim to the end of its transaction.
 * Ended exactly once ({@link #end}, or {@link #abandon} if nothing else ended it), on the
 * request thread that began it; whatever fails on the way, the transaction is never left
 * open on the thread. What each outcome commits:
 * <table>
 * <caption>Outcomes of a transactional handler</caption>
 * <tr>
 * <th>outcome</th>
 * <th>transaction</th>
 * <th>the client gets</th>
 * <th>a retry</th>
 * </tr>
 * <tr>
 * <td>a response whose status {@code idempo.responses} stores (by default 2xx, 3xx
 * including redirects, 4xx but 408, 425, 429; a 5xx made storable commits too)</td>
 * <td>record inserted, committed with the handler's writes</td>
 * <td>the response, after the commit</td>
 * <td>replays it</td>
 * </tr>
 * <tr>
 * <td>the same, larger than {@code idempo.max-response-size}</td>
 * <td>committed with a record that answers {@code 410 response-not-replayable}</td>
 * <td>the response, after the commit</td>
 * <td>{@code 410}</td>
 * </tr>
 * <tr>
 * <td>a status the policy does not store (by default 5xx, 408, 425, 429); any exception
 * from the handler, checked or not, even one an exception handler turned into a response
 * (Spring's {@code @Transactional} would commit on a checked one); an error while writing
 * the body (the persistence context is flushed before the body is written, so constraint
 * violations surface here); {@code sendError}; a response that could not be held
 * back</td>
 * <td>rolled back</td>
 * <td>the response as rendered</td>
 * <td>runs the handler</td>
 * </tr>
 * <tr>
 * <td>a request Spring MVC rejected before the handler method began (an unreadable or
 * invalid body, an unsupported media type, a missing or unconvertible parameter, a failed
 * {@code @Valid})</td>
 * <td>rolled back (nothing was written)</td>
 * <td>Spring MVC's 4xx</td>
 * <td>runs the handler</td>
 * </tr>
 * <tr>
 * <td>an asynchronous result its declared type did not announce</td>
 * <td>rolled back when the handler returns; the result is sent unprotected (logged as an
 * error)</td>
 * <td>the result</td>
 * <td>runs the handler</td>
 * </tr>
 * <tr>
 * <td>the insert or the commit fails, the transaction was marked rollback-only, or the
 * connection dies while committing</td>
 * <td>rolled back, or unknown if the commit itself failed</td>
 * <td>{@code 503 commit-failed} with {@code Retry-After}</td>
 * <td>replays if it committed, else runs the handler</td>
 * </tr>
 * </table>
 *
 * @author idempo
 */
final class TransactionalExecution {

	/**
	 * The request attribute that holds it; a constant, so that code which runs without
	 * spring-tx can look for it without loading this class.
	 */
	static final String ATTRIBUTE = "dev.idempo.web.TransactionalExecution";

	private static final Log logger = LogFactory.getLog(TransactionalExecution.class);

	private final TransactionalHold hold;

	private final String fingerprint;

	private final Duration ttl;

	private final ResponseStoragePolicy responses;

	private final AtomicBoolean ended = new AtomicBoolean();

	private volatile @Nullable Duration ttlOverride;

	private volatile boolean storingRefused;

	void overrideTtl(Duration ttl) {
		this.ttlOverride = ttl;
	}

	/** The handler's response is not to be replayed: its record answers 410. */
	void refuseStoring() {
		this.storingRefused = true;
	}

	TransactionalExecution(TransactionalHold hold, String fingerprint, Duration ttl, ResponseStoragePolicy responses) {
		this.hold = hold;
		this.fingerprint = fingerprint;
		this.ttl = ttl;
		this.responses = responses;
	}

	static @Nullable TransactionalExecution of(ServletRequest request) {
		return (TransactionalExecution) request.getAttribute(ATTRIBUTE);
	}

	boolean isEnded() {
		return this.ended.get();
	}

	/**
	 * The handler has returned and its response is held back in {@code response}: commits
	 * with the record, or rolls back, as the outcome requires (see the class
	 * description). If the commit fails, {@code response} is replaced by a
	 * {@code 503 commit-failed} problem.
	 * @param request the request
	 * @param response the held-back response
	 * @param handlerFailed whether the handler threw (even if an exception handler then
	 * rendered a response)
	 * @param rejectedBeforeHandler whether Spring MVC answered before the handler method
	 * began (its arguments could not be resolved)
	 * @param listener the listener
	 * @param settings the settings
	 * @throws IOException if the problem response cannot be written
	 */
	void end(HttpServletRequest request, @Nullable CapturingResponse response, boolean handlerFailed,
			boolean rejectedBeforeHandler, IdempotencyListener listener, IdempotencySettings settings,
			List<IdempotentResponseFilter> filters, List<IdempotencyProblemCustomizer> problems) throws IOException {
		if (!begin()) {
			return;
		}
		NotStoredReason reason = notStoredReason(response, handlerFailed, rejectedBeforeHandler, settings);
		// a response too large to keep is a success all the same: its work commits, with
		// a record that answers 410; every other reason rolls back
		if (response == null || (reason != NotStoredReason.NONE && reason != NotStoredReason.TOO_LARGE)) {
			rollback(listener, reason);
			return;
		}
		this.hold.workEnded();
		boolean replayable = true;
		try {
			replayable = !this.storingRefused && reason == NotStoredReason.NONE;
			byte[] envelope = replayable ? response.envelope(settings::isReplayable, request, filters) : null;
			replayable = envelope != null;
			if (envelope == null) {
				envelope = notReplayable(request, problems);
			}
			Duration ttl = (this.ttlOverride != null) ? this.ttlOverride : this.ttl;
			this.hold.complete(new StoredRecord(this.fingerprint, envelope), ttl);
		}
		catch (ClaimMode.NotCommittedException ex) {
			commitFailed(request, response, ex.getCause(), ex.isOutcomeUnknown(), listener, settings, problems);
			return;
		}
		catch (RuntimeException | Error ex) {
			this.hold.recordFailed(ex);
			commitFailed(request, response, ex, false, listener, settings, problems);
			return;
		}
		listener.onResponse(replayable ? ResponseOutcome.STORED : ResponseOutcome.NOT_STORED,
				replayable ? NotStoredReason.NONE
						: (reason == NotStoredReason.TOO_LARGE) ? NotStoredReason.TOO_LARGE : NotStoredReason.REFUSED);
	}

	private NotStoredReason notStoredReason(@Nullable CapturingResponse response, boolean handlerFailed,
			boolean rejectedBeforeHandler, IdempotencySettings settings) {
		if (rejectedBeforeHandler) {
			return NotStoredReason.REJECTED_BEFORE_HANDLER;
		}
		if (handlerFailed) {
			return NotStoredReason.EXCEPTION;
		}
		return (response != null) ? response.notStoredReason(settings.maxResponseSize(), this.responses)
				: NotStoredReason.NOT_CAPTURED;
	}

	/**
	 * The record and the handler's writes were rolled back, or the commit failed: the
	 * held-back response becomes a {@code 503 commit-failed} problem, if it still can.
	 */
	private static void commitFailed(HttpServletRequest request, CapturingResponse response, Throwable ex,
			boolean unknown, IdempotencyListener listener, IdempotencySettings settings,
			List<IdempotencyProblemCustomizer> problems) throws IOException {
		listener.onResponse(ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
		logger.warn("The transaction of an idempotent request " + (unknown
				? "failed while committing (it may or may not have committed)" : "was rolled back before its commit")
				+ "; answering 503", ex);
		if (!response.isCommitted()) {
			response.resetToBeforeCapture();
			ProblemResponses.write(request, response, IdempotencyProblem.COMMIT_FAILED,
					unknown ? "The request ran, but its transaction failed while committing: it is unknown whether it "
							+ "committed. Retry with the same idempotency key: you get its response if it did, "
							+ "and it runs again if it did not."
							: "The request ran, but its transaction was rolled back, so nothing of it was kept. Retry "
									+ "with the same idempotency key to run it again.",
					settings.storeFailureRetryAfter(), problems);
		}
		if (ex instanceof Error error) {
			throw error;
		}
	}

	/**
	 * Flushes the persistence context (JPA) before the response body is written, so that
	 * a write that fails at the flush (a constraint violation) fails the handler, which
	 * the application's exception handling then answers, instead of failing the commit
	 * after a success was rendered.
	 */
	void flushBeforeBody() {
		if (!this.ended.get()) {
			this.hold.flush();
		}
	}

	/**
	 * Rolls back a transaction nothing else ended: the handler's result is asynchronous,
	 * or the request left the handler chain without its completion callback, or ending it
	 * failed before it could roll back. Only on the thread that began it (a transaction
	 * is bound to its thread).
	 * @param listener the listener
	 * @param reason why
	 * @return whether this call ended it
	 */
	boolean abandon(IdempotencyListener listener, NotStoredReason reason) {
		if (!this.hold.isOwnThread() || this.hold.isEnded()) {
			return false;
		}
		this.ended.set(true);
		rollback(listener, reason);
		return true;
	}

	private boolean begin() {
		return this.ended.compareAndSet(false, true);
	}

	private void rollback(IdempotencyListener listener, NotStoredReason reason) {
		try {
			this.hold.release(null);
			listener.onResponse(ResponseOutcome.NOT_STORED, reason);
		}
		catch (RuntimeException ex) {
			// the connection is gone: so are the transaction and its lock
			logger.warn("Could not roll back the transaction of an idempotent request", ex);
			listener.onResponse(ResponseOutcome.STORE_ERROR, reason);
		}
	}

	private static byte[] notReplayable(HttpServletRequest request, List<IdempotencyProblemCustomizer> problems) {
		byte[] body = ProblemResponses
			.body(request, IdempotencyProblem.RESPONSE_NOT_REPLAYABLE,
					"A request with this idempotency key was processed and committed, but its response was not kept "
							+ "(larger than idempo.max-response-size, or refused), so it cannot be replayed.",
					problems);
		return ResponseEnvelope.encode(IdempotencyProblem.RESPONSE_NOT_REPLAYABLE.status().value(),
				Map.of("Content-Type", List.of(ProblemResponses.PROBLEM_JSON)), body, 0, body.length);
	}

}
