package dev.idempo.webflux;

import java.util.List;
import java.util.Map;

import reactor.core.publisher.Mono;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.flow.ReactiveClaimMode.ReactiveHold;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.flow.RequestFlow;
import dev.idempo.store.StoredRecord;

/**
 * One protected request between its claim and the end of its response: what the WebFlux
 * flow tells the {@link ReactiveHold} of its claim, which ends exactly once, by storing
 * the response or by releasing the key (the response is not storable, the handler failed,
 * the client went away), and renews the lease meanwhile as every entry point's does.
 *
 * @author idempo
 */
final class ReactiveExecution {

	private final ReactiveHold hold;

	private final RequestFlow flow;

	private final String fingerprint;

	private final IdempotentHandlerPolicies.Policy policy;

	ReactiveExecution(ReactiveHold hold, RequestFlow flow, String fingerprint,
			IdempotentHandlerPolicies.Policy policy) {
		this.hold = hold;
		this.flow = flow;
		this.fingerprint = fingerprint;
		this.policy = policy;
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
	 * to be stored.
	 * @param status the status
	 * @param headers the replayable headers
	 * @param body the body
	 * @return completes once the store answered
	 */
	Mono<Void> settle(int status, Map<String, List<String>> headers, byte[] body) {
		if (this.hold.isEnded()) {
			return Mono.empty();
		}
		NotStoredReason reason = this.flow.notStored(presetReason(), this.policy.responses(), status, body.length);
		if (reason != NotStoredReason.NONE) {
			return this.hold.release(Source.WEB, reason);
		}
		StoredRecord record = new StoredRecord(this.fingerprint,
				ResponseEnvelope.encode(new CapturedResponse(status, headers, body)));
		return this.hold.store(Source.WEB, record, this.policy.ttl(), "the response");
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
