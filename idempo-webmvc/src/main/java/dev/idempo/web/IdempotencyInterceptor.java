package dev.idempo.web;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.CapturedResponse;
import dev.idempo.flow.ClaimMode;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.RequestOutcome;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.core.ObservedLockingStore;
import dev.idempo.flow.PlainClaimMode;
import dev.idempo.flow.RequestFlow;
import dev.idempo.core.RequestFingerprints;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;

import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.AsyncHandlerInterceptor;
import org.springframework.web.filter.ServerHttpObservationFilter;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.util.WebUtils;

/**
 * The heart of the request flow: for a protected request it parses the key, claims the
 * key and then lets the handler run, replays the stored response, or answers with a
 * problem. A body of declared length is fingerprinted as it streams (to the handler, or
 * discarded before a replay or 422), so that a request meeting its key in progress is
 * answered 409 without its body being read; other bodies are read whole and fingerprinted
 * before the claim. Runs after every other interceptor, so that requests they reject
 * never claim a key. Storing the response is left to {@link IdempotencyFilter}, which
 * sees the bytes as written.
 *
 * @author idempo
 */
public class IdempotencyInterceptor implements AsyncHandlerInterceptor {

	/**
	 * The header added to replayed responses by default ({@code idempo.replayed-header}
	 * names another).
	 */
	public static final String REPLAYED_HEADER = IdempotencySettings.DEFAULT_REPLAYED_HEADER;

	private static final Log logger = LogFactory.getLog(IdempotencyInterceptor.class);

	/** The name of the observation of a replay. */
	public static final String REPLAY_OBSERVATION = "idempo.replay";

	/**
	 * The high-cardinality key value that the request's observation gets with the
	 * outcome.
	 */
	public static final String OUTCOME_KEY = "idempo.outcome";

	private final LockingStore rawStore;

	private HandlerMode<?> plain;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private RequestFingerprintStrategy fingerprints = RequestFingerprintStrategy.DEFAULT;

	private List<IdempotentResponseFilter> responseFilters = List.of();

	private List<IdempotencyProblemCustomizer> problemCustomizers = List.of();

	private final IdempotentHandlers handlers;

	private final CallerScopeResolver callerScopeResolver;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final RequestFlow flow;

	private final LeaseRenewer leaseRenewer;

	private final @Nullable TransactionalIdempotency transactional;

	private final @Nullable HandlerMode<?> transactionalMode;

	/**
	 * Creates an interceptor.
	 * @param store the store
	 * @param handlers the handler policies
	 * @param callerScopeResolver the caller scope resolver
	 * @param listener the listener for metrics
	 * @param settings the settings
	 * @param leaseRenewer renews leases on stores whose claims expire
	 */
	public IdempotencyInterceptor(LockingStore store, IdempotentHandlers handlers,
			CallerScopeResolver callerScopeResolver, IdempotencyListener listener, IdempotencySettings settings,
			LeaseRenewer leaseRenewer) {
		this(store, handlers, callerScopeResolver, listener, settings, leaseRenewer, null);
	}

	/**
	 * Creates an interceptor that also runs transactional handlers.
	 * @param store the store
	 * @param handlers the handler policies
	 * @param callerScopeResolver the caller scope resolver
	 * @param listener the listener for metrics
	 * @param settings the settings
	 * @param leaseRenewer renews leases on stores whose claims expire
	 * @param transactional runs transactional handlers, {@code null} if there are none
	 */
	public IdempotencyInterceptor(LockingStore store, IdempotentHandlers handlers,
			CallerScopeResolver callerScopeResolver, IdempotencyListener listener, IdempotencySettings settings,
			LeaseRenewer leaseRenewer, @Nullable TransactionalIdempotency transactional) {
		this.transactional = transactional;
		this.listener = listener;
		this.rawStore = store;
		this.handlers = handlers;
		this.callerScopeResolver = callerScopeResolver;
		this.settings = settings;
		this.flow = new RequestFlow(settings);
		this.leaseRenewer = leaseRenewer;
		this.plain = plainMode(new ObservedLockingStore(store, listener));
		// only touched when transactional mode exists, which spring-tx comes with
		this.transactionalMode = (transactional != null) ? transactional.handlerMode(listener) : null;
	}

	/**
	 * Observes store operations ({@value ObservedLockingStore#OBSERVATION}) and replays
	 * ({@value #REPLAY_OBSERVATION}), and adds each protected request's outcome to its
	 * server observation as the high-cardinality key value {@value #OUTCOME_KEY} (never a
	 * metric tag). Without it (or with {@link ObservationRegistry#NOOP}), nothing is
	 * observed.
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = observationRegistry;
		this.plain = plainMode(new ObservedLockingStore(this.rawStore, this.listener, observationRegistry));
	}

	/**
	 * Replaces what of a request is fingerprinted.
	 * @param fingerprints the strategy
	 */
	public void setFingerprintStrategy(RequestFingerprintStrategy fingerprints) {
		this.fingerprints = fingerprints;
	}

	/**
	 * Lets filters see, replace or refuse each response before it is stored.
	 * @param responseFilters the filters, in order
	 */
	public void setResponseFilters(List<IdempotentResponseFilter> responseFilters) {
		this.responseFilters = List.copyOf(responseFilters);
	}

	/**
	 * Customizes idempo's problem responses.
	 * @param problemCustomizers the customizers, in order
	 */
	public void setProblemCustomizers(List<IdempotencyProblemCustomizer> problemCustomizers) {
		this.problemCustomizers = List.copyOf(problemCustomizers);
	}

	static boolean isProtectedMethod(String method) {
		return RequestFlow.takesPart(method);
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws Exception {
		BufferedBodyRequest bodyRequest = WebUtils.getNativeRequest(request, BufferedBodyRequest.class);
		if (bodyRequest != null) {
			// whatever the handler (functional endpoints too): what it reads is not
			// copied
			bodyRequest.stopRecording();
		}
		if (request.getDispatcherType() != DispatcherType.REQUEST || !isProtectedMethod(request.getMethod())
				|| IdempotentExecution.of(request) != null) {
			return true;
		}
		// the annotation, else the first of idempo.routes that matches
		IdempotentHandlers.Policy policy = this.handlers.policy(request, handler);
		if (policy == null) {
			return true;
		}
		CapturingResponse capture = WebUtils.getNativeResponse(response, CapturingResponse.class);
		if (capture != null && !(handler instanceof HandlerMethod)) {
			// a functional endpoint: no return type tells whether it streams
			capture.streamByContentType();
		}
		RequestFlow.KeyOutcome key = this.flow.key(keyHeaders(request), policy.required());
		if (key instanceof RequestFlow.Rejection rejection) {
			return reject(request, response, rejection);
		}
		if (!(key instanceof RequestFlow.Keyed keyed)) {
			return true;
		}
		return protect(request, response, bodyRequest, keyed.key(), policy);
	}

	private boolean protect(HttpServletRequest request, HttpServletResponse response,
			@Nullable BufferedBodyRequest bodyRequest, String key, IdempotentHandlers.Policy policy)
			throws IOException {
		CapturingResponse capture = WebUtils.getNativeResponse(response, CapturingResponse.class);
		if (bodyRequest == null || capture == null) {
			throw new IllegalStateException(
					"An @Idempotent handler or a route of idempo.routes was reached with a key but without idempo's "
							+ IdempotencyFilter.class.getSimpleName() + " around the request; register it "
							+ "(auto-configuration does) or include it in MockMvc, and make sure the key header is "
							+ "present when it runs (a filter that adds it must run before it: idempo.filter-order)");
		}
		String storageKey = RequestFingerprint.storageKey(this.callerScopeResolver.resolve(request), key);
		if (canStream(request, bodyRequest, policy)) {
			return protectStreamed(request, response, bodyRequest, capture, storageKey, policy);
		}
		String fingerprint;
		try {
			byte[] body = RequestFingerprint.isForm(request.getContentType()) ? new byte[0]
					: bodyRequest.body(this.settings.maxRequestSize());
			fingerprint = fingerprint(request, body, policy.fingerprint());
		}
		catch (BufferedBodyRequest.BudgetExceededException ex) {
			bodyRequest.discardRest(this.settings.maxRequestSize());
			return reject(request, response, RequestOutcome.BUSY, IdempotencyProblem.SERVER_BUSY,
					"The server holds too many large idempotent request bodies at the moment; the request was not "
							+ "processed. Retry later.",
					this.settings.storeFailureRetryAfter());
		}
		catch (BufferedBodyRequest.RequestTooLargeException ex) {
			return tooLarge(request, response, ex.getMaxSize());
		}
		return claim(request, response, mode(policy),
				new Claiming(capture, storageKey, PendingFingerprint.of(fingerprint), policy));
	}

	private boolean tooLarge(HttpServletRequest request, HttpServletResponse response, long maxSize)
			throws IOException {
		return reject(request, response, this.flow.tooLarge(maxSize));
	}

	/**
	 * Whether the body can be fingerprinted as it streams to the handler instead of being
	 * held whole before the claim: its length is declared, the default fingerprint covers
	 * its bytes as sent (not a form's parameters, not the canonical JSON of ignored
	 * fields, not a replaced strategy), and the handler is not transactional (whose
	 * record is written in its transaction with a fingerprint known up front).
	 */
	private boolean canStream(HttpServletRequest request, BufferedBodyRequest bodyRequest,
			IdempotentHandlers.Policy policy) {
		long declared = request.getContentLengthLong();
		String contentType = request.getContentType();
		return declared >= 0 && declared <= Integer.MAX_VALUE && !policy.transactional()
				&& this.fingerprints == RequestFingerprintStrategy.DEFAULT && !RequestFingerprint.isForm(contentType)
				&& !policy.fingerprint().needsWholeBody(contentType) && bodyRequest.canStream();
	}

	/**
	 * Claims the key before the body is read: a request meeting its key in progress gets
	 * 409 without its body being read; a fresh one digests its body while the handler
	 * reads it (and what it leaves, before the response is stored); one meeting a
	 * completed record digests its body as it discards it, then replays or gets 422.
	 */
	private boolean protectStreamed(HttpServletRequest request, HttpServletResponse response,
			BufferedBodyRequest bodyRequest, CapturingResponse capture, String storageKey,
			IdempotentHandlers.Policy policy) throws IOException {
		long declared = request.getContentLengthLong();
		if (declared > this.settings.maxRequestSize()) {
			// read up to the limit, as a body held whole would have been, so that the
			// client reads the answer rather than a reset
			boolean clientReads = bodyRequest.discardRest(this.settings.maxRequestSize());
			return clientReads && tooLarge(request, response, this.settings.maxRequestSize());
		}
		StreamedBody body = new StreamedBody(RequestFingerprints.streamed(request.getMethod(), request.getRequestURI(),
				request.getQueryString(), declared), declared);
		bodyRequest.stream(body);
		FingerprintOptions options = policy.fingerprint();
		PendingFingerprint fingerprint = new StreamedFingerprint(bodyRequest, body, this.settings.maxRequestSize(),
				(digest) -> withHeaders(request, digest, options));
		return claim(request, response, mode(policy), new Claiming(capture, storageKey, fingerprint, policy));
	}

	/**
	 * The strategy's fingerprint of what the options leave of the body, with the options'
	 * headers; with no options, the strategy's fingerprint of the body as sent.
	 */
	private String fingerprint(HttpServletRequest request, byte[] body, FingerprintOptions options) throws IOException {
		return withHeaders(request,
				this.fingerprints.fingerprint(request, options.body(request.getContentType(), body)), options);
	}

	private static String withHeaders(HttpServletRequest request, String fingerprint, FingerprintOptions options) {
		return options.withHeaders(fingerprint, (name) -> {
			Enumeration<String> values = request.getHeaders(name);
			return (values != null) ? Collections.list(values) : List.of();
		});
	}

	/**
	 * The one path of every mode: claims the key, then answers as the flow decides:
	 * replays, answers 409 or 422, refuses or runs the handler unprotected if the store
	 * fails, or starts the execution.
	 */
	private <H extends ClaimMode.Hold> boolean claim(HttpServletRequest request, HttpServletResponse response,
			HandlerMode<H> mode, Claiming claiming) throws IOException {
		ClaimMode.Claim<H> claim;
		try {
			claim = mode.claims().claim(claiming.storageKey(), mode.claimWait());
		}
		catch (RuntimeException ex) {
			if (!mode.claims().isStoreFailure(ex)) {
				throw ex;
			}
			return storeFailed(request, response, mode, ex);
		}
		// a streamed body is digested as it is discarded, to compare it with a record's
		RequestFlow.Decision<H> decision = this.flow.decide(claim, claiming.fingerprint()::matches,
				claiming.policy().fingerprint().headers());
		if (decision instanceof RequestFlow.Execute<H> execute) {
			mode.starter()
				.start(request, claiming.capture(), execute.hold(), claiming.fingerprint(), claiming.policy());
			BoundCall.bind(request, claiming.storageKey());
			onRequest(request, RequestOutcome.EXECUTED);
			return true;
		}
		if (decision instanceof RequestFlow.Replay<H> replay) {
			return replay(request, response, mode, replay.record(), claiming);
		}
		if (decision instanceof RequestFlow.Reject<H> reject) {
			return reject(request, response, reject.rejection());
		}
		throw new IllegalStateException("A claim decided " + decision);
	}

	private HandlerMode<?> mode(IdempotentHandlers.Policy policy) {
		if (!policy.transactional()) {
			return this.plain;
		}
		HandlerMode<?> transactional = this.transactionalMode;
		if (transactional == null) {
			throw new IllegalStateException("A transactional @Idempotent handler was reached, but transactional "
					+ "mode is not configured (it needs the postgres or mysql store)");
		}
		return transactional;
	}

	/**
	 * The plain mode: claims on the store (waiting for a holder up to
	 * {@code idempo.conflict-wait-timeout}), and captures the response up to the limit.
	 */
	private HandlerMode<PlainClaimMode.PlainHold> plainMode(LockingStore store) {
		return new HandlerMode<>(new PlainClaimMode(store, this.settings, this.leaseRenewer),
				this.settings.conflictWaitTimeout(), this::startPlain,
				"Idempotency store failed; refusing the request (fail-closed)");
	}

	private void startPlain(HttpServletRequest request, CapturingResponse capture, ClaimMode.Hold hold,
			PendingFingerprint fingerprint, IdempotentHandlers.Policy policy) {
		NotStoredReason preset = !policy.cacheResponse() ? NotStoredReason.DISABLED
				: policy.streaming() ? NotStoredReason.STREAMING : NotStoredReason.NONE;
		IdempotentExecution execution = IdempotentExecution.start(hold, this.listener, this.settings, this.leaseRenewer,
				fingerprint, policy.ttl(), policy.responses(), preset);
		if (!this.responseFilters.isEmpty()) {
			execution.responseFilters(request, this.responseFilters);
		}
		request.setAttribute(IdempotentExecution.ATTRIBUTE, execution);
		// what is stored is captured up to the limit; of what is not, only the end is
		// held back: the client may have the whole response only once the key is free
		if (preset == NotStoredReason.NONE) {
			capture.startCapture(this.settings.maxResponseSize());
		}
		else {
			capture.holdEnd();
		}
	}

	/**
	 * Ends a transactional handler's transaction, on the request thread, after the
	 * response was rendered into the held-back buffer and before the filter lets it go.
	 */
	@Override
	public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler,
			@Nullable Exception ex) throws Exception {
		BoundCall.unbind(request);
		// only touched when transactional mode exists, which spring-tx comes with
		if (this.transactional == null || request.getAttribute(TransactionalExecution.ATTRIBUTE) == null) {
			return;
		}
		TransactionalExecution execution = TransactionalExecution.of(request);
		if (execution == null || execution.isEnded()) {
			return;
		}
		boolean handlerFailed = ex != null || request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE) != null
				|| request.getAttribute(WebUtils.ERROR_EXCEPTION_ATTRIBUTE) != null;
		execution.end(request, WebUtils.getNativeResponse(response, CapturingResponse.class), handlerFailed,
				ex == null && BeforeHandlerRejections.isRejectedBeforeHandler(request), this.listener, this.settings,
				this.responseFilters, this.problemCustomizers);
	}

	/**
	 * A transactional handler returned an asynchronous result, which the start-up checks
	 * did not see in its declared return type: its transaction cannot follow it to
	 * another thread, so it is rolled back now and the key freed.
	 */
	@Override
	public void afterConcurrentHandlingStarted(HttpServletRequest request, HttpServletResponse response,
			Object handler) {
		BoundCall.unbind(request);
		if (this.transactional == null || request.getAttribute(TransactionalExecution.ATTRIBUTE) == null) {
			return;
		}
		TransactionalExecution execution = TransactionalExecution.of(request);
		if (execution != null && execution.abandon(this.listener, NotStoredReason.STREAMING)) {
			logger.error("The transactional @Idempotent handler " + handler + " returned an asynchronous result; "
					+ "its transaction was rolled back and its response is not protected. Return the response "
					+ "body or a ResponseEntity from transactional handlers.");
		}
	}

	private void onRequest(HttpServletRequest request, RequestOutcome outcome) {
		this.listener.onRequest(outcome);
		if (!this.observationRegistry.isNoop()) {
			ServerHttpObservationFilter.findObservationContext(request)
				.ifPresent((context) -> context.addHighCardinalityKeyValue(KeyValue.of(OUTCOME_KEY, outcome.tag())));
		}
	}

	private List<String> keyHeaders(HttpServletRequest request) {
		List<String> values = new ArrayList<>(1);
		values.addAll(Collections.list(request.getHeaders(this.settings.keyHeader())));
		for (String alias : this.settings.keyHeaderAliases()) {
			if (!alias.equalsIgnoreCase(this.settings.keyHeader())) {
				values.addAll(Collections.list(request.getHeaders(alias)));
			}
		}
		return values;
	}

	private boolean replay(HttpServletRequest request, HttpServletResponse response, HandlerMode<?> mode,
			StoredRecord record, Claiming claiming) throws IOException {
		CapturedResponse stored;
		try {
			stored = ResponseEnvelope.decode(record.response());
		}
		catch (IllegalArgumentException ex) {
			// the claiming mode's failure handling: a transactional handler never runs
			// unprotected, whose writes would commit without a record, nor a handler
			// whose
			// body was read to compare it
			return claiming.fingerprint().consumesBody() ? refuse(request, response, mode, ex)
					: storeFailed(request, response, mode, ex);
		}
		if (this.observationRegistry.isNoop()) {
			writeReplay(response, stored);
		}
		else {
			Observation observation = Observation.createNotStarted(REPLAY_OBSERVATION, this.observationRegistry)
				.contextualName("idempo replay")
				.lowCardinalityKeyValue("status", Integer.toString(stored.status()))
				.start();
			try (Observation.Scope scope = observation.openScope()) {
				writeReplay(response, stored);
			}
			catch (IOException | RuntimeException ex) {
				observation.error(ex);
				throw ex;
			}
			finally {
				observation.stop();
			}
		}
		onRequest(request, RequestOutcome.REPLAYED);
		return false;
	}

	private void writeReplay(HttpServletResponse response, CapturedResponse stored) throws IOException {
		response.setStatus(stored.status());
		stored.headers().forEach((name, values) -> {
			if (name.equalsIgnoreCase("Content-Type")) {
				response.setContentType(values.get(0));
			}
			else if (this.settings.isReplayable(name) && !values.isEmpty()) {
				response.setHeader(name, values.get(0));
				values.stream().skip(1).forEach((value) -> response.addHeader(name, value));
			}
		});
		response.setHeader(this.settings.replayedHeader(), "true");
		response.setContentLength(stored.body().length);
		if (stored.body().length > 0) {
			response.getOutputStream().write(stored.body());
		}
	}

	/**
	 * The store failed: the handler runs unprotected where the mode fails open, else the
	 * request is refused.
	 */
	private boolean storeFailed(HttpServletRequest request, HttpServletResponse response, HandlerMode<?> mode,
			Exception ex) throws IOException {
		if (this.flow.storeFailed(mode.claims().failsOpen()) instanceof RequestFlow.Unprotected<?>) {
			logger.warn("Idempotency store failed; running the handler unprotected (fail-open)", ex);
			onRequest(request, RequestOutcome.UNPROTECTED);
			return true;
		}
		return refuse(request, response, mode, ex);
	}

	private boolean refuse(HttpServletRequest request, HttpServletResponse response, HandlerMode<?> mode, Exception ex)
			throws IOException {
		logger.warn(mode.refusal(), ex);
		return reject(request, response, this.flow.storeUnavailable());
	}

	/**
	 * A protected request about to claim its key.
	 *
	 * @param capture the response's capture
	 * @param storageKey the storage key
	 * @param fingerprint the request's fingerprint, pending a streamed body
	 * @param policy the handler's policy
	 */
	private record Claiming(CapturingResponse capture, String storageKey, PendingFingerprint fingerprint,
			IdempotentHandlers.Policy policy) {
	}

	private boolean reject(HttpServletRequest request, HttpServletResponse response, RequestFlow.Rejection rejection)
			throws IOException {
		return reject(request, response, rejection.outcome(), IdempotencyProblem.of(rejection.problem()),
				rejection.detail(), rejection.retryAfter());
	}

	private boolean reject(HttpServletRequest request, HttpServletResponse response, RequestOutcome outcome,
			IdempotencyProblem problem, String detail, @Nullable Duration retryAfter) throws IOException {
		ProblemResponses.write(request, response, problem, detail, retryAfter, this.problemCustomizers);
		onRequest(request, outcome);
		return false;
	}

}
