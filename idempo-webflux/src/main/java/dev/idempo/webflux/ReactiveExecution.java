package dev.idempo.webflux;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.flow.ReactiveClaimMode.ReactiveHold;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.core.ProtectedRequest;
import dev.idempo.core.StoredResponseFilter;
import dev.idempo.flow.RequestFlow;
import dev.idempo.store.StoredRecord;

/**
 * One protected request between its claim and the end of its response: what the WebFlux
 * flow tells the {@link ReactiveHold} of its claim, which ends exactly once, by storing
 * the response or by releasing the key (the response is not storable, the handler failed,
 * the client went away, a {@link StoredResponseFilter} or the handler refused), and
 * renews the lease meanwhile as every entry point's does. Its fingerprint may be pending:
 * that of a body that streams to the handler is known once the body ended, and is waited
 * for only when the response is to be stored, after the response was decided on (as on
 * Spring MVC: the response first, then the rest of the body). A body that does not end
 * cleanly (the client went away, it ended short of its declared length or ran past it, it
 * went idle) stores nothing and releases the key, as when the handler fails. The handler
 * reaches it through {@link ReactiveIdempotentResponse}: in its pipeline's Reactor
 * context under {@link #CONTEXT_KEY}, and in the exchange's attributes under
 * {@link #ATTRIBUTE}.
 *
 * @author idempo
 */
final class ReactiveExecution {

	/** The key of the execution in the Reactor context of the handler's pipeline. */
	static final String CONTEXT_KEY = ReactiveExecution.class.getName();

	/** The exchange attribute that holds the execution. */
	static final String ATTRIBUTE = ReactiveExecution.class.getName();

	private static final Log logger = LogFactory.getLog(ReactiveExecution.class);

	private final ReactiveHold hold;

	private final RequestFlow flow;

	private final Mono<String> fingerprint;

	private final IdempotentHandlerPolicies.Policy policy;

	private final ProtectedRequest request;

	private final List<StoredResponseFilter> responseFilters;

	/**
	 * What the handler asked for its own response ({@link ReactiveIdempotentResponse}).
	 */
	private volatile @Nullable Duration ttlOverride;

	private volatile boolean storingRefused;

	/**
	 * Creates an execution.
	 * @param hold the claim
	 * @param flow the flow
	 * @param fingerprint the request's fingerprint, known now ({@code Mono.just}) or once
	 * its streamed body ended (an error if it did not end cleanly); subscribed to only to
	 * store the response
	 * @param policy the handler's policy
	 * @param request the request, for the response filters
	 * @param responseFilters the response filters
	 */
	ReactiveExecution(ReactiveHold hold, RequestFlow flow, Mono<String> fingerprint,
			IdempotentHandlerPolicies.Policy policy, ProtectedRequest request,
			List<StoredResponseFilter> responseFilters) {
		this.hold = hold;
		this.flow = flow;
		this.fingerprint = fingerprint;
		this.policy = policy;
		this.request = request;
		this.responseFilters = responseFilters;
	}

	/**
	 * The handler keeps its response for {@code ttl} instead of its policy's TTL.
	 * @param ttl the time to live, valid
	 */
	void overrideTtl(Duration ttl) {
		this.ttlOverride = ttl;
	}

	/** The handler's response is not to be stored: the key is released. */
	void refuseStoring() {
		this.storingRefused = true;
	}

	/**
	 * The handler is about to run: its lease is renewed from now on.
	 */
	void start() {
		this.hold.workStarted();
	}

	/**
	 * Why the response will not be stored whatever it turns out to be, or {@code NONE}.
	 * @return the reason
	 */
	NotStoredReason presetReason() {
		return this.policy.cacheResponse() ? NotStoredReason.NONE : NotStoredReason.DISABLED;
	}

	/**
	 * The handler's whole response is known: stores it, or releases the key if it is not
	 * to be stored. The response is decided on first (its status and size, the response
	 * filters); only a response to be stored waits for a pending fingerprint, reading the
	 * rest of a streamed body, while the lease is still renewed.
	 * @param status the status
	 * @param headers the replayable headers
	 * @param body the body
	 * @return completes once the store answered
	 */
	Mono<Void> settle(int status, Map<String, List<String>> headers, byte[] body) {
		if (this.hold.isEnded()) {
			return Mono.empty();
		}
		// a response the handler refused is held back all the same, so that the client
		// has it only once its key is free
		NotStoredReason reason = (this.storingRefused && presetReason() == NotStoredReason.NONE)
				? NotStoredReason.REFUSED
				: this.flow.notStored(presetReason(), this.policy.responses(), status, body.length);
		if (reason != NotStoredReason.NONE) {
			return this.hold.release(Source.WEB, reason);
		}
		// the filters get a copy: the client has the body the handler produced, whatever
		// a filter does to the one it is given (Spring MVC's get a copy too)
		CapturedResponse response = new CapturedResponse(status, headers,
				this.responseFilters.isEmpty() ? body : body.clone());
		for (StoredResponseFilter filter : this.responseFilters) {
			@Nullable CapturedResponse filtered;
			try {
				filtered = filter.beforeStore(this.request, response);
			}
			catch (VirtualMachineError ex) {
				throw ex;
			}
			catch (Throwable ex) {
				// an Error (an assertion) too: the claim must end; counted as Spring MVC
				// counts a record that could not be made
				logger.warn("A StoredResponseFilter failed; the response is not stored, and a retry runs the "
						+ "handler again", ex);
				return this.hold.recordFailed(Source.WEB);
			}
			if (filtered == null) {
				return this.hold.release(Source.WEB, NotStoredReason.REFUSED);
			}
			response = filtered;
		}
		return store(ResponseEnvelope.encode(response));
	}

	/**
	 * Stores the response once the request's fingerprint is known (a streamed body read
	 * to its end); a body that did not end cleanly stores nothing and releases the key.
	 */
	private Mono<Void> store(byte[] envelope) {
		return this.fingerprint
			.switchIfEmpty(Mono.error(() -> new IllegalStateException("The request has no fingerprint")))
			.onErrorResume((ex) -> bodyFailed(ex).then(Mono.<String>empty()))
			.flatMap((fingerprint) -> {
				Duration ttl = this.ttlOverride;
				return this.hold.store(Source.WEB, new StoredRecord(fingerprint, envelope),
						(ttl != null) ? ttl : this.policy.ttl(), "the response");
			});
	}

	/**
	 * The streamed body did not end cleanly after the handler answered: the answer is not
	 * one to the request the client declared, so it is not stored, and the key is
	 * released, as when the handler fails.
	 */
	private Mono<Void> bodyFailed(Throwable failure) {
		if (logger.isDebugEnabled()) {
			logger.debug("The request body did not end cleanly; the response is not stored and the key is released",
					failure);
		}
		return this.hold.release(Source.WEB, NotStoredReason.EXCEPTION);
	}

	/**
	 * Ends without storing, for a reason known before the response is (it streams, or the
	 * handler does not store).
	 * @param reason why nothing is stored
	 * @return completes once the key is released
	 */
	Mono<Void> releaseUnstored(NotStoredReason reason) {
		return this.hold.release(Source.WEB, reason);
	}

	/**
	 * The handler or the writing of its response failed: releases the key, unless the
	 * execution has ended.
	 * @return completes once the key is released
	 */
	Mono<Void> fail() {
		return releaseUnstored(NotStoredReason.EXCEPTION);
	}

	/**
	 * The client went away: releases the key in the background, unless the response was
	 * complete (stored or released already).
	 */
	void cancel() {
		this.hold.release(Source.WEB, NotStoredReason.CANCELLED).subscribe();
	}

}
