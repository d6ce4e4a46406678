package dev.idempo.web;

import java.time.Duration;

import jakarta.servlet.http.HttpServletRequest;

import dev.idempo.flow.ClaimMode;

/**
 * How a protected handler runs in one claim mode: the interceptor's one flow claims with
 * {@link #claims()} and answers replays, conflicts and store failures alike in every
 * mode; what differs is how the execution of a claimed key starts ({@link #starter()})
 * and what a refusal logs.
 *
 * @param <H> the mode's hold
 * @param claims how keys are claimed and records commit
 * @param claimWait how long a claim waits for another request holding the key
 * @param starter starts the execution of a claimed key
 * @param refusal what is logged when a store failure refuses the request
 * @author idempo
 */
record HandlerMode<H extends ClaimMode.Hold>(ClaimMode<H> claims, Duration claimWait, Starter<H> starter,
		String refusal) {

	/**
	 * Starts the execution of a claimed key, before the handler runs.
	 *
	 * @param <H> the mode's hold
	 */
	@FunctionalInterface
	interface Starter<H extends ClaimMode.Hold> {

		/**
		 * Starts the execution: keeps it as a request attribute and prepares the
		 * response's capture.
		 * @param request the request
		 * @param capture the response's capture
		 * @param hold the claim
		 * @param fingerprint the request's fingerprint, which a streamed body completes
		 * only once it was read
		 * @param policy the handler's policy
		 */
		void start(HttpServletRequest request, CapturingResponse capture, H hold, PendingFingerprint fingerprint,
				IdempotentHandlers.Policy policy);

	}

}
