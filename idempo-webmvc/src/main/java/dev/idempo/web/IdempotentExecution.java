package dev.idempo.web;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
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
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.flow.PlainClaimMode;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;

/**
 * One handler execution under a claimed key, kept as a request attribute from the
 * interceptor's claim to the end of the request. Its whole state is one {@link Phase},
 * changed only by compare-and-set, because the events that move it arrive on different
 * threads (the request thread, the async dispatch thread, the {@code Callable}'s executor
 * thread, the container's timeout thread). Every method that moves the phase says whether
 * it did; only the caller that moves it to {@link Phase#ENDED} touches the store
 * afterwards, so the execution ends exactly once: stored and released, or only released.
 * <p>
 * An asynchronous request that timed out or failed while its work may still be running
 * keeps its key until that work ends, so a retry can never run the handler alongside it.
 *
 * @author idempo
 */
final class IdempotentExecution {

	static final String ATTRIBUTE = IdempotentExecution.class.getName();

	private static final Log logger = LogFactory.getLog(IdempotentExecution.class);

	/**
	 * Where an execution stands. {@code RUNNING}, {@code CALLABLE_RETURNED} and
	 * {@code AWAITING_ERROR_PAGE} end by storing the response (or releasing the key if it
	 * is not storable); the {@code ABANDONED} phases end without storing, each as its
	 * work allows.
	 */
	enum Phase {

		/** The handler runs, or its asynchronous result is awaited. */
		RUNNING,

		/** The handler's {@code Callable} runs on the task executor. */
		CALLABLE_RUNNING,

		/** The {@code Callable} has returned; its result is being written. */
		CALLABLE_RETURNED,

		/**
		 * The handler called {@code sendError} in a container that will tell
		 * {@link IdempotencyRequestListener} when the request ends: the container renders
		 * the body in an error dispatch, which is captured and stored, or the key is
		 * released when the request ends without one.
		 */
		AWAITING_ERROR_PAGE,

		/**
		 * The asynchronous request timed out or failed, and its work (a
		 * {@code DeferredResult}, {@code CompletableFuture}, ...) does not say when it
		 * ends: the claim is left to lapse one lock TTL later.
		 */
		ABANDONED,

		/**
		 * The asynchronous request timed out or failed while its {@code Callable} runs:
		 * the key is released when the {@code Callable} returns.
		 */
		ABANDONED_CALLABLE_RUNNING,

		/**
		 * The asynchronous request timed out or failed after its {@code Callable}
		 * returned: the key is released when the request ends.
		 */
		ABANDONED_CALLABLE_RETURNED,

		/**
		 * The request has ended while its {@code Callable} still runs: the key is
		 * released when the {@code Callable} returns.
		 */
		RELEASE_WHEN_CALLABLE_RETURNS,

		/** Stored or released: nothing more happens. */
		ENDED

	}

	private final ClaimMode.Hold hold;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final LeaseRenewer leaseRenewer;

	private final PendingFingerprint fingerprint;

	private final Duration ttl;

	private final ResponseStoragePolicy responses;

	/** Why the response is not stored whatever it turns out to be, or {@code NONE}. */
	private final NotStoredReason policyReason;

	private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.RUNNING);

	/** What the handler asked for its own response ({@code IdempotentResponse}). */
	private volatile @Nullable Duration ttlOverride;

	private volatile boolean storingRefused;

	private volatile boolean exceptionResolved;

	private List<IdempotentResponseFilter> responseFilters = List.of();

	private @Nullable HttpServletRequest request;

	private IdempotentExecution(ClaimMode.Hold hold, IdempotencyListener listener, IdempotencySettings settings,
			LeaseRenewer leaseRenewer, PendingFingerprint fingerprint, Duration ttl, ResponseStoragePolicy responses,
			NotStoredReason policyReason) {
		this.hold = hold;
		hold.workStarted();
		this.listener = listener;
		this.settings = settings;
		this.leaseRenewer = leaseRenewer;
		this.fingerprint = fingerprint;
		this.ttl = ttl;
		this.responses = responses;
		this.policyReason = policyReason;
	}

	/**
	 * Starts an execution under a lease just acquired, renewing the lease while it runs
	 * if the store's leases expire.
	 * @param responses which statuses are stored
	 * @param policyReason {@code DISABLED} or {@code STREAMING} if the handler's policy
	 * rules out storing, else {@code NONE}
	 */
	static IdempotentExecution start(LockingStore store, IdempotencyListener listener, IdempotencySettings settings,
			LeaseRenewer leaseRenewer, Lease lease, String fingerprint, Duration ttl, ResponseStoragePolicy responses,
			NotStoredReason policyReason) {
		return start(new PlainClaimMode(store, settings, leaseRenewer).hold(lease), listener, settings, leaseRenewer,
				PendingFingerprint.of(fingerprint), ttl, responses, policyReason);
	}

	/**
	 * Starts an execution under a claim just held.
	 * @param fingerprint the request's fingerprint, asked for only when the response is
	 * stored (a streamed body is read to its end then)
	 * @param responses which statuses are stored
	 * @param policyReason {@code DISABLED} or {@code STREAMING} if the handler's policy
	 * rules out storing, else {@code NONE}
	 */
	static IdempotentExecution start(ClaimMode.Hold hold, IdempotencyListener listener, IdempotencySettings settings,
			LeaseRenewer leaseRenewer, PendingFingerprint fingerprint, Duration ttl, ResponseStoragePolicy responses,
			NotStoredReason policyReason) {
		return new IdempotentExecution(hold, listener, settings, leaseRenewer, fingerprint, ttl, responses,
				policyReason);
	}

	/**
	 * Lets {@code filters} see the response before it is stored.
	 * @param request the request, which the filters see
	 * @param filters the filters, in order
	 */
	void responseFilters(HttpServletRequest request, List<IdempotentResponseFilter> filters) {
		this.request = request;
		this.responseFilters = filters;
	}

	/**
	 * The handler keeps its response for {@code ttl} instead of its policy's TTL.
	 * @param ttl the time to live, positive
	 */
	void overrideTtl(Duration ttl) {
		this.ttlOverride = ttl;
	}

	/** The handler's response is not to be stored: the key is released. */
	void refuseStoring() {
		this.storingRefused = true;
	}

	/**
	 * An exception that escaped the handler was answered by idempo's
	 * {@link IdempotencyExceptionResolver}: the answer is not the handler's response, so
	 * it is not stored and the key is released, as for any exception that escapes.
	 */
	void exceptionResolved() {
		this.exceptionResolved = true;
	}

	static @Nullable IdempotentExecution of(ServletRequest request) {
		return (IdempotentExecution) request.getAttribute(ATTRIBUTE);
	}

	Phase phase() {
		return this.phase.get();
	}

	long maxResponseSize() {
		return this.settings.maxResponseSize();
	}

	boolean isAwaitingErrorPage() {
		return this.phase.get() == Phase.AWAITING_ERROR_PAGE;
	}

	/**
	 * Whether the lease was found lost while the handler ran (a fact about the store, not
	 * a phase: it only decides that the response is not stored).
	 */
	boolean isLeaseLost() {
		return this.hold.isLost();
	}

	/**
	 * The handler's {@code Callable} starts running (on its executor thread).
	 * @return whether the phase moved
	 */
	boolean callableStarted() {
		return advance((current) -> switch (current) {
			case RUNNING, CALLABLE_RETURNED -> Phase.CALLABLE_RUNNING;
			case ABANDONED -> Phase.ABANDONED_CALLABLE_RUNNING;
			default -> null;
		}) != null;
	}

	/**
	 * The handler's {@code Callable} has returned or thrown (on its executor thread). If
	 * the request ended meanwhile, this releases the key.
	 * @return whether the phase moved
	 */
	boolean callableReturned() {
		Phase left = advance((current) -> switch (current) {
			case CALLABLE_RUNNING -> Phase.CALLABLE_RETURNED;
			case ABANDONED_CALLABLE_RUNNING -> Phase.ABANDONED_CALLABLE_RETURNED;
			case RELEASE_WHEN_CALLABLE_RETURNS -> Phase.ENDED;
			default -> null;
		});
		if (left == Phase.RELEASE_WHEN_CALLABLE_RETURNS) {
			stopRenewal();
			release(NotStoredReason.ASYNC_TIMEOUT);
		}
		return left != null;
	}

	/**
	 * The asynchronous request timed out or failed (on a container thread); its work may
	 * still be running, so nothing will be stored.
	 * @return whether the phase moved
	 */
	boolean abandoned() {
		return advance((current) -> switch (current) {
			case RUNNING -> Phase.ABANDONED;
			case CALLABLE_RUNNING -> Phase.ABANDONED_CALLABLE_RUNNING;
			case CALLABLE_RETURNED -> Phase.ABANDONED_CALLABLE_RETURNED;
			default -> null;
		}) != null;
	}

	/**
	 * The handler called {@code sendError} (seen by the filter when the dispatch
	 * returns): the error dispatch that follows is captured and stored.
	 * @return whether the phase moved; if not, the caller ends the execution itself
	 */
	boolean awaitErrorPage() {
		return advance((current) -> switch (current) {
			case RUNNING, CALLABLE_RETURNED -> Phase.AWAITING_ERROR_PAGE;
			default -> null;
		}) != null;
	}

	/**
	 * The dispatch that wrote the response has returned (on the thread that ran it):
	 * stores the response, or releases the key. After {@code sendError} with no error
	 * page to wait for, what is stored is what the client got: the status and headers,
	 * without a body.
	 * @param response the captured response
	 * @return whether this call ended the execution
	 */
	boolean finish(CapturingResponse response) {
		return end(response, Cause.RESPONSE);
	}

	/**
	 * An exception escaped the handler or the error page: releases the key.
	 * @return whether this call ended the execution
	 */
	boolean fail() {
		return end(null, Cause.EXCEPTION);
	}

	/**
	 * Spring MVC answered before the handler method began (its arguments could not be
	 * resolved): releases the key without storing, whatever the response, and without
	 * waiting for an error page.
	 * @return whether this call ended the execution
	 */
	boolean rejectedBeforeHandler() {
		return end(null, Cause.REJECTED_BEFORE_HANDLER);
	}

	/**
	 * The request is over (the container destroys it, or completes its asynchronous
	 * processing) without a dispatch having ended the execution: no error dispatch
	 * followed {@code sendError}, or the container gave up on an asynchronous request.
	 * Releases the key, unless work of the request still runs.
	 * @return whether this call ended the execution
	 */
	boolean requestEnded() {
		return end(null, Cause.REQUEST_OVER);
	}

	AsyncListener asyncListener() {
		return new AsyncListener() {

			@Override
			public void onComplete(AsyncEvent event) {
				// normally ended by the filter on the last async dispatch; this catches
				// requests that ended without one (client gone, container error)
				requestEnded();
			}

			@Override
			public void onTimeout(AsyncEvent event) {
				abandoned();
			}

			@Override
			public void onError(AsyncEvent event) {
				abandoned();
			}

			@Override
			public void onStartAsync(AsyncEvent event) {
				event.getAsyncContext().addListener(this);
			}

		};
	}

	/**
	 * Moves the phase as {@code next} says, atomically.
	 * @param next the next phase for the current one, {@code null} if the event does not
	 * apply to it
	 * @return the phase moved from, {@code null} if it did not move
	 */
	private @Nullable Phase advance(UnaryOperator<@Nullable Phase> next) {
		while (true) {
			Phase current = this.phase.get();
			Phase target = next.apply(current);
			if (target == null) {
				return null;
			}
			if (this.phase.compareAndSet(current, target)) {
				return current;
			}
		}
	}

	private boolean end(@Nullable CapturingResponse response, Cause cause) {
		Phase left = advance((current) -> switch (current) {
			case RUNNING, CALLABLE_RETURNED, AWAITING_ERROR_PAGE, ABANDONED, ABANDONED_CALLABLE_RETURNED -> Phase.ENDED;
			case CALLABLE_RUNNING, ABANDONED_CALLABLE_RUNNING -> Phase.RELEASE_WHEN_CALLABLE_RETURNS;
			case RELEASE_WHEN_CALLABLE_RETURNS, ENDED -> null;
		});
		if (left == null) {
			return false;
		}
		switch (left) {
			case CALLABLE_RUNNING, ABANDONED_CALLABLE_RUNNING -> {
				// the lease is still renewed: the Callable's return releases it
				return false;
			}
			case ABANDONED -> lapse();
			case ABANDONED_CALLABLE_RETURNED -> {
				stopRenewal();
				release(NotStoredReason.ASYNC_TIMEOUT);
			}
			default -> {
				if (cause == Cause.RESPONSE && response != null) {
					// stops renewing the lease itself, once a streamed body was read
					settle(response);
				}
				else {
					stopRenewal();
					release(switch (cause) {
						case REJECTED_BEFORE_HANDLER -> NotStoredReason.REJECTED_BEFORE_HANDLER;
						case REQUEST_OVER -> (left == Phase.AWAITING_ERROR_PAGE) ? NotStoredReason.ERROR_PAGE
								: NotStoredReason.EXCEPTION;
						default -> NotStoredReason.EXCEPTION;
					});
				}
			}
		}
		return true;
	}

	/**
	 * The work of an abandoned request does not say when it ends: stop renewing, so that
	 * a lease lapses one lock TTL later; other stores release after the same delay.
	 */
	private void lapse() {
		stopRenewal();
		if (this.hold.lapses()) {
			this.listener.onResponse(ResponseOutcome.NOT_STORED, NotStoredReason.ASYNC_TIMEOUT);
		}
		else {
			this.leaseRenewer.schedule(() -> release(NotStoredReason.ASYNC_TIMEOUT), this.settings.lockTtl());
		}
	}

	/**
	 * Stores the response or releases the key. The decision is taken on the handler's
	 * response first; only then is the rest of a streamed body read for the fingerprint,
	 * while the lease is still renewed, so that a slow client cannot let the claim lapse
	 * (and a duplicate run the handler) before the response is stored, and a container's
	 * answer to a body that fails (408, say) does not undo the handler's response.
	 */
	private void settle(CapturingResponse response) {
		NotStoredReason reason = this.exceptionResolved ? NotStoredReason.EXCEPTION
				: this.storingRefused ? NotStoredReason.REFUSED : notStoredReason(response);
		if (reason != NotStoredReason.NONE) {
			stopRenewal();
			release(reason);
			return;
		}
		if (this.fingerprint.bodyFailed()) {
			// as if the handler threw: the read failure reached it
			stopRenewal();
			release(NotStoredReason.EXCEPTION);
			return;
		}
		StoredRecord record;
		try {
			record = record(response);
		}
		catch (RuntimeException ex) {
			stopRenewal();
			logger.warn("Could not store an idempotent response; a retry will run the handler again", ex);
			this.listener.onResponse(ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
			releaseQuietly();
			return;
		}
		stopRenewal();
		if (record == null) {
			release(NotStoredReason.REFUSED);
		}
		else if (isLeaseLost()) {
			logger.warn("Idempotency lease was lost while the handler ran; its response is not stored");
			this.listener.onResponse(ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
			releaseQuietly();
		}
		else {
			complete(record);
		}
	}

	/**
	 * The record to store, or {@code null} if a response filter refused. The response is
	 * taken as the handler left it, and only then is the rest of a streamed body read for
	 * the fingerprint (a body that fails then makes the container set its own status,
	 * which is not the handler's response).
	 */
	private @Nullable StoredRecord record(CapturingResponse response) {
		byte[] envelope = envelope(response);
		return (envelope != null) ? new StoredRecord(this.fingerprint.get(), envelope) : null;
	}

	private void complete(StoredRecord record) {
		try {
			Duration ttl = this.ttlOverride;
			if (this.hold.complete(record, (ttl != null) ? ttl : this.ttl)) {
				this.listener.onResponse(ResponseOutcome.STORED, NotStoredReason.NONE);
			}
			else {
				logger.warn("Idempotency lease was lost before the response could be stored; it is not stored");
				this.listener.onResponse(ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
				releaseQuietly();
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not store an idempotent response; a retry will run the handler again", ex);
			this.listener.onResponse(ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
			releaseQuietly();
		}
	}

	/**
	 * The envelope to store, after the response filters, or {@code null} if one refused.
	 */
	private byte @Nullable [] envelope(CapturingResponse response) {
		HttpServletRequest request = this.request;
		return (request != null) ? response.envelope(this.settings::isReplayable, request, this.responseFilters)
				: response.envelope(this.settings::isReplayable);
	}

	private void stopRenewal() {
		this.hold.workEnded();
	}

	/**
	 * The handler's policy first (it decided before the response existed), then the one
	 * decision on the response that the transactional execution takes too.
	 */
	private NotStoredReason notStoredReason(CapturingResponse response) {
		if (this.policyReason != NotStoredReason.NONE) {
			return this.policyReason;
		}
		return response.notStoredReason(this.settings.maxResponseSize(), this.responses);
	}

	/** What ends an execution. */
	private enum Cause {

		/** A dispatch returned, with the response to store. */
		RESPONSE,

		/** An exception escaped the handler or the error page. */
		EXCEPTION,

		/** The request is over without a dispatch having ended the execution. */
		REQUEST_OVER,

		/** Spring MVC answered before the handler method began. */
		REJECTED_BEFORE_HANDLER

	}

	private void release(NotStoredReason reason) {
		try {
			if (this.hold.release(null)) {
				this.listener.onResponse(ResponseOutcome.NOT_STORED, reason);
			}
			else {
				this.listener.onResponse(ResponseOutcome.LOCK_LOST, reason);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release an idempotency key; it frees itself when its lock expires", ex);
			this.listener.onResponse(ResponseOutcome.STORE_ERROR, reason);
		}
	}

	/**
	 * Frees what a lost claim may have left behind; a no-op when another request owns the
	 * key.
	 */
	private void releaseQuietly() {
		try {
			this.hold.release(null);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not release an idempotency key", ex);
		}
	}

}
