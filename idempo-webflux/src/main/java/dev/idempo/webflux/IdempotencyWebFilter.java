package dev.idempo.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.idempo.Idempotent;
import dev.idempo.core.CapturedResponse;
import dev.idempo.core.CurrentIdempotentCall;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.FingerprintStrategy;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.RequestOutcome;
import dev.idempo.core.IdempotencyProblemType;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ProblemCustomizer;
import dev.idempo.core.StoredResponseFilter;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.flow.RequestFlow;
import dev.idempo.core.ProblemJson;
import dev.idempo.flow.ReactiveClaimMode;
import dev.idempo.flow.ReactiveClaimMode.ReactiveHold;
import dev.idempo.core.RequestFingerprints;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.core.StorageKeys;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.observation.ServerRequestObservationContext;
import org.springframework.util.Assert;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * The request flow for Spring WebFlux handler methods annotated with {@link Idempotent},
 * and for the functional endpoints and unannotated handler methods that
 * {@code idempo.routes} protects: for a protected request it parses the key, fingerprints
 * the request, claims the key on a {@link ReactiveLockingStore}, and then lets the
 * handler run, replays the stored response, or answers with a problem, as Spring MVC's
 * flow does, with the same statuses, problem types and records. Nothing here blocks: the
 * store answers {@code Mono}s, and the request body is read as the server delivers it.
 * <p>
 * A body of declared length ({@code Content-Length}, within
 * {@code idempo.max-request-size}) streams, as on Spring MVC: the key is claimed before
 * the body is read, the handler reads the body as sent while it is digested, and nothing
 * of it is held; the fingerprint is known once the body ended (the flow reads what the
 * handler left, releasing it, before the response is stored), and equals that of the same
 * body held whole, so records answer retries whichever way either came. A streamed body
 * that runs past its declared length fails (400), and one that goes idle while it is read
 * (no byte for {@link #setRequestBodyTimeout the request body timeout}) fails with 408:
 * either releases the key and stores nothing. A body without a declared length, a form, a
 * JSON body whose fingerprint leaves fields out, any body under a replaced
 * {@link FingerprintStrategy} (which is given the bytes), and a body Spring Cloud Gateway
 * cached (something behind this filter reads it more than once) are read whole before the
 * claim instead.
 * <p>
 * The handler of a request is looked up in the given {@link HandlerMapping}s (those of
 * {@code @RequestMapping} methods and of functional endpoints), in their order, as the
 * {@code DispatcherHandler} looks it up: the first mapping that has a handler decides.
 * Requests none of them serves pass through, and so do those whose handler is neither a
 * handler method nor a functional endpoint.
 * <p>
 * The stack-neutral hooks apply as on Spring MVC: the {@link FingerprintStrategy}
 * fingerprints, the {@link StoredResponseFilter}s see each response before it is stored,
 * the {@link ProblemCustomizer}s each problem before it is written, and a handler has its
 * say over its own response through {@link ReactiveIdempotentResponse}; all of them run
 * on the thread the exchange is served on, often an event loop, and must not block.
 *
 * @author idempo
 */
public class IdempotencyWebFilter implements WebFilter, Ordered {

	/** The name of the observation of a replay, the same as Spring MVC's. */
	public static final String REPLAY_OBSERVATION = "idempo.replay";

	/**
	 * The high-cardinality key value that the request's observation gets with the
	 * outcome, the same as Spring MVC's.
	 */
	public static final String OUTCOME_KEY = "idempo.outcome";

	/**
	 * How long a streamed request body may go without a byte while it is read, by default
	 * ({@code idempo.request-body-timeout}): 60 seconds, Tomcat's default connection
	 * timeout.
	 */
	public static final Duration DEFAULT_REQUEST_BODY_TIMEOUT = Duration.ofSeconds(60);

	/**
	 * The exchange attribute under which Spring Cloud Gateway keeps a request body it
	 * cached whole ({@code ServerWebExchangeUtils.CACHED_REQUEST_BODY_ATTR}), named here
	 * so that this class does not need the gateway.
	 */
	static final String GATEWAY_CACHED_REQUEST_BODY_ATTR = "cachedRequestBody";

	private static final Log logger = LogFactory.getLog(IdempotencyWebFilter.class);

	private final RequestFlow flow;

	private final ReactiveClaimMode claims;

	private final IdempotentHandlerPolicies policies;

	private final List<HandlerMapping> handlerMappings;

	private final ReactiveCallerScopeResolver callerScopes;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private int order;

	private FingerprintStrategy fingerprints = FingerprintStrategy.DEFAULT;

	private List<StoredResponseFilter> responseFilters = List.of();

	private List<ProblemCustomizer> problemCustomizers = List.of();

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	/**
	 * The idle timer of the bodies this filter streams
	 * ({@code idempo.request-body-timeout}).
	 */
	private IdleBodies idleBodies = new IdleBodies(DEFAULT_REQUEST_BODY_TIMEOUT, Schedulers.parallel());

	/**
	 * Creates a filter that finds handlers in one mapping.
	 * @param store the store
	 * @param policies the policies of annotated handlers and configured routes
	 * @param handlerMapping finds a request's handler
	 * @param callerScopes the caller scope of a request
	 * @param listener the listener for metrics
	 * @param settings the settings
	 * @param leaseRenewer renews leases on stores whose claims expire
	 */
	public IdempotencyWebFilter(ReactiveLockingStore store, IdempotentHandlerPolicies policies,
			HandlerMapping handlerMapping, ReactiveCallerScopeResolver callerScopes, IdempotencyListener listener,
			IdempotencySettings settings, LeaseRenewer leaseRenewer) {
		this(store, policies, List.of(handlerMapping), callerScopes, listener, settings, leaseRenewer);
	}

	/**
	 * Creates a filter.
	 * @param store the store
	 * @param policies the policies of annotated handlers and configured routes
	 * @param handlerMappings find a request's handler, asked in the order given (sort
	 * them as the {@code DispatcherHandler} does)
	 * @param callerScopes the caller scope of a request
	 * @param listener the listener for metrics
	 * @param settings the settings
	 * @param leaseRenewer renews leases on stores whose claims expire
	 */
	public IdempotencyWebFilter(ReactiveLockingStore store, IdempotentHandlerPolicies policies,
			List<? extends HandlerMapping> handlerMappings, ReactiveCallerScopeResolver callerScopes,
			IdempotencyListener listener, IdempotencySettings settings, LeaseRenewer leaseRenewer) {
		this.flow = new RequestFlow(settings);
		this.claims = new ReactiveClaimMode(store, settings, leaseRenewer, listener);
		this.policies = policies;
		this.handlerMappings = List.copyOf(handlerMappings);
		this.callerScopes = callerScopes;
		this.listener = listener;
		this.settings = settings;
	}

	/**
	 * Sets where the filter runs among the application's web filters (default 0, after
	 * Spring Security's).
	 * @param order the order
	 */
	public void setOrder(int order) {
		this.order = order;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	/**
	 * Replaces what of a request is fingerprinted (by default
	 * {@link FingerprintStrategy#DEFAULT}).
	 * @param fingerprints the strategy
	 */
	public void setFingerprintStrategy(FingerprintStrategy fingerprints) {
		this.fingerprints = fingerprints;
	}

	/**
	 * Lets filters see, replace or refuse each response before it is stored.
	 * @param responseFilters the filters, in order
	 */
	public void setResponseFilters(List<StoredResponseFilter> responseFilters) {
		this.responseFilters = List.copyOf(responseFilters);
	}

	/**
	 * Customizes idempo's problem responses.
	 * @param problemCustomizers the customizers, in order
	 */
	public void setProblemCustomizers(List<ProblemCustomizer> problemCustomizers) {
		this.problemCustomizers = List.copyOf(problemCustomizers);
	}

	/**
	 * Observes replays ({@value #REPLAY_OBSERVATION}, nested in the observation of the
	 * server request when there is one), and adds each protected request's outcome to its
	 * server observation as the high-cardinality key value {@value #OUTCOME_KEY} (never a
	 * metric tag), as Spring MVC's flow does. Without it (or with
	 * {@link ObservationRegistry#NOOP}), nothing is observed. Store operations are
	 * observed by the store given to the constructor (an
	 * {@code ObservedReactiveLockingStore} with the same registry).
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = observationRegistry;
	}

	/**
	 * Sets how long a request body that streams may go without a byte arriving while it
	 * is read (default {@link #DEFAULT_REQUEST_BODY_TIMEOUT}): then the body fails with
	 * {@code 408 Request Timeout}, its key is released and nothing is stored, so that a
	 * client gone silent mid-body does not hold its key (Reactor Netty has no read
	 * timeout, and the lease is renewed while the handler runs). Time counts only while
	 * the body's reader asks for bytes; the timer runs on Reactor's parallel scheduler.
	 * Bodies read whole before the claim hold no key while they are read and are not
	 * timed.
	 * @param requestBodyTimeout the idle timeout, positive
	 */
	public void setRequestBodyTimeout(Duration requestBodyTimeout) {
		Assert.isTrue(requestBodyTimeout.compareTo(Duration.ZERO) > 0, "'requestBodyTimeout' must be positive");
		this.idleBodies = new IdleBodies(requestBodyTimeout, Schedulers.parallel());
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (!RequestFlow.takesPart(exchange.getRequest().getMethod().name())) {
			return chain.filter(exchange);
		}
		// the lookup runs again in the DispatcherHandler: mappings write what they
		// matched
		// into the exchange's attributes (a functional route combines its pattern with
		// one
		// already there), so this one sees a private copy of them
		ServerWebExchange lookup = new PrivateAttributesExchange(exchange);
		return Flux.fromIterable(this.handlerMappings)
			.concatMap((mapping) -> mapping.getHandler(lookup))
			.next()
			// a request no handler takes (405, 415, 404) is the dispatcher's to answer
			.onErrorResume((ex) -> Mono.empty())
			.mapNotNull((handler) -> this.policies.policy(exchange.getRequest(), handler))
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((policy) -> policy.isPresent() ? protectKeyed(exchange, chain, policy.get())
					: chain.filter(exchange));
	}

	/**
	 * Runs a request through the request flow under {@code policy}, whatever its handler:
	 * how a gateway route's {@code Idempotency} filter, and {@code idempo.routes} at a
	 * gateway, protect the backend behind it.
	 * @param exchange the exchange
	 * @param chain what handles the request (the rest of the route's filters)
	 * @param policy the route's policy
	 * @return completion of the exchange
	 */
	Mono<Void> protect(ServerWebExchange exchange, WebFilterChain chain, IdempotentHandlerPolicies.Policy policy) {
		if (!RequestFlow.takesPart(exchange.getRequest().getMethod().name())) {
			return chain.filter(exchange);
		}
		return protectKeyed(exchange, chain, policy);
	}

	private Mono<Void> protectKeyed(ServerWebExchange exchange, WebFilterChain chain,
			IdempotentHandlerPolicies.Policy policy) {
		RequestFlow.KeyOutcome key = this.flow.key(keyHeaders(exchange.getRequest()), policy.required());
		if (key instanceof RequestFlow.Rejection rejection) {
			return reject(exchange, rejection);
		}
		if (!(key instanceof RequestFlow.Keyed keyed)) {
			return chain.filter(exchange);
		}
		return this.callerScopes.resolve(exchange)
			.switchIfEmpty(Mono.error(() -> new IllegalStateException(
					"The ReactiveCallerScopeResolver " + this.callerScopes + " completed without a caller scope")))
			.flatMap((scope) -> {
				String storageKey = StorageKeys.of(scope, keyed.key());
				if (canStream(exchange, policy)) {
					return protectStreamed(exchange, chain, storageKey, policy);
				}
				return readBody(exchange, policy.fingerprint()).flatMap((body) -> {
					if (body.fingerprint() == null) {
						return reject(exchange, this.flow.tooLarge(this.settings.maxRequestSize()));
					}
					return claim(body.exchange(), chain, new Claiming(storageKey, body.fingerprint(), policy));
				});
			});
	}

	/**
	 * Whether the body can be fingerprinted as it streams to the handler instead of being
	 * read whole before the claim, as on Spring MVC: its length is declared and within
	 * {@code idempo.max-request-size} (a larger one is read up to the limit and refused,
	 * as a body read whole is), the default fingerprint covers its bytes as sent (not a
	 * form's parameters, not the canonical JSON of ignored fields, not a replaced
	 * strategy), and it is not held whole already.
	 * <p>
	 * A body that Spring Cloud Gateway cached
	 * ({@value #GATEWAY_CACHED_REQUEST_BODY_ATTR}) is held whole already, and is cached
	 * because something after this filter reads it more than once: the {@code Retry}
	 * filter subscribes to it once per attempt, the {@code CircuitBreaker} filter once
	 * more for its fallback. A streamed body can be read once, so such a body is read
	 * whole here instead (from the gateway's cache), and the exchange behind this filter
	 * gets bytes that can be read again. The gateway caches those routes' bodies in its
	 * {@code AdaptCachedBodyGlobalFilter}, which runs before every route filter and so
	 * before this one.
	 */
	private boolean canStream(ServerWebExchange exchange, IdempotentHandlerPolicies.Policy policy) {
		ServerHttpRequest request = exchange.getRequest();
		long declared = request.getHeaders().getContentLength();
		String contentType = request.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
		return declared >= 0 && declared <= Math.min(this.settings.maxRequestSize(), Integer.MAX_VALUE)
				&& this.fingerprints == FingerprintStrategy.DEFAULT && !RequestFingerprints.isForm(contentType)
				&& !policy.fingerprint().needsWholeBody(contentType)
				&& exchange.getAttribute(GATEWAY_CACHED_REQUEST_BODY_ATTR) == null;
	}

	/**
	 * Claims the key before the body is read, as Spring MVC does for a body of declared
	 * length: a request meeting its key in progress gets 409 without its body being read;
	 * a fresh one runs the handler with a body digested as it passes (what the handler
	 * leaves is read once its response is decided on, before it is stored); one meeting a
	 * completed record has its body digested as it is discarded, then gets the replay or
	 * 422. Nothing of the body is held.
	 */
	private Mono<Void> protectStreamed(ServerWebExchange exchange, WebFilterChain chain, String storageKey,
			IdempotentHandlerPolicies.Policy policy) {
		ServerHttpRequest request = exchange.getRequest();
		long declared = request.getHeaders().getContentLength();
		StreamedRequestBody body = new StreamedRequestBody(request.getBody(),
				RequestFingerprints.streamed(request.getMethod().name(), request.getURI().getRawPath(),
						request.getURI().getRawQuery(), declared),
				declared, this.settings.maxRequestSize(), this.idleBodies);
		ServerWebExchange streamed = exchange.mutate().request(new ServerHttpRequestDecorator(request) {

			@Override
			public Flux<DataBuffer> getBody() {
				return body.body();
			}

		}).build();
		FingerprintOptions options = policy.fingerprint();
		Mono<String> fingerprint = body.digest()
			.map((digest) -> options.withHeaders(digest, (name) -> request.getHeaders().getOrEmpty(name)));
		return decideStreamed(storageKey, fingerprint, options.headers()).flatMap((decision) -> {
			if (decision instanceof RequestFlow.Execute<ReactiveHold> execute) {
				return execute(streamed, chain, storageKey, new ReactiveExecution(execute.hold(), this.flow,
						fingerprint, policy, new ExchangeProtectedRequest(streamed), this.responseFilters));
			}
			if (decision instanceof RequestFlow.Replay<ReactiveHold> replay) {
				// the body was read to compare it: the handler cannot run on it
				return replay(exchange, chain, replay.record(), false);
			}
			return answerUnclaimed(exchange, chain, decision);
		});
	}

	/**
	 * Claims the key and decides, reading the body (to its end, releasing it) only if the
	 * decision compares fingerprints. A store failure is decided as the store-failure
	 * mode says; a body that fails while it is read for the comparison is a 400 (the
	 * client has likely gone), or a 408 if it went idle.
	 */
	private Mono<RequestFlow.Decision<ReactiveHold>> decideStreamed(String storageKey, Mono<String> fingerprint,
			List<String> headers) {
		return this.claims.claim(storageKey, this.settings.conflictWaitTimeout())
			.flatMap((claim) -> this.flow.comparesFingerprint(claim)
					? fingerprint.onErrorMap(BodyFailed::new)
						.map((digest) -> this.flow.decide(claim, digest::equals, headers))
					: Mono.just(this.flow.decide(claim, IdempotencyWebFilter::notRead, headers)))
			.onErrorResume((ex) -> !(ex instanceof BodyFailed), (ex) -> {
				logStoreFailure(ex);
				return Mono.just(this.flow.storeFailed(this.settings.failOpen()));
			})
			.onErrorMap(BodyFailed.class,
					(ex) -> StreamedRequestBody.isIdleTimeout(ex.getCause()) ? ex.getCause()
							: new ServerWebInputException(
									"The request body did not arrive whole; it could not be "
											+ "compared with the request stored under its idempotency key",
									null, ex.getCause()));
	}

	private static boolean notRead(String storedFingerprint) {
		throw new IllegalStateException("Only a completed record's decision compares fingerprints");
	}

	private List<String> keyHeaders(ServerHttpRequest request) {
		HttpHeaders headers = request.getHeaders();
		List<String> values = new ArrayList<>(1);
		values.addAll(headers.getOrEmpty(this.settings.keyHeader()));
		for (String alias : this.settings.keyHeaderAliases()) {
			if (!alias.equalsIgnoreCase(this.settings.keyHeader())) {
				values.addAll(headers.getOrEmpty(alias));
			}
		}
		return values;
	}

	/**
	 * Reads the whole body to fingerprint it before the claim (a body that does not
	 * stream), and hands the handler an exchange that reads the same bytes again. A
	 * form's parsed parameters stand in for its bytes, as on Spring MVC; the exchange
	 * parses them once and keeps them for the handler.
	 */
	private Mono<Body> readBody(ServerWebExchange exchange, FingerprintOptions options) {
		ServerHttpRequest request = exchange.getRequest();
		String contentType = request.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
		if (RequestFingerprints.isForm(contentType)) {
			return FormFingerprints.canonicalForm(exchange)
				.map((form) -> new Body(fingerprint(exchange, form, options), exchange));
		}
		int limit = (int) Math.min(Integer.MAX_VALUE, this.settings.maxRequestSize());
		return DataBufferUtils.join(request.getBody(), limit)
			.map(IdempotencyWebFilter::bytes)
			.defaultIfEmpty(new byte[0])
			.map((bytes) -> new Body(fingerprint(exchange, options.body(contentType, bytes), options),
					withBody(exchange, bytes)))
			.onErrorResume(DataBufferLimitException.class, (ex) -> Mono.just(new Body(null, exchange)));
	}

	/**
	 * The strategy's fingerprint of what the options leave of the body, with the options'
	 * headers.
	 */
	private String fingerprint(ServerWebExchange exchange, byte[] body, FingerprintOptions options) {
		String fingerprint = this.fingerprints.fingerprint(new ExchangeProtectedRequest(exchange), body);
		return options.withHeaders(fingerprint, (name) -> exchange.getRequest().getHeaders().getOrEmpty(name));
	}

	private static ServerWebExchange withBody(ServerWebExchange exchange, byte[] body) {
		ServerHttpRequest request = new ServerHttpRequestDecorator(exchange.getRequest()) {

			@Override
			public Flux<DataBuffer> getBody() {
				return (body.length == 0) ? Flux.empty()
						: Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(body)));
			}

		};
		return exchange.mutate().request(request).build();
	}

	/**
	 * Claims the key, and answers as the flow decides: replays, answers 409 or 422,
	 * refuses or runs the handler unprotected if the store fails, or runs the handler
	 * under the claim.
	 */
	private Mono<Void> claim(ServerWebExchange exchange, WebFilterChain chain, Claiming claiming) {
		List<String> headers = claiming.policy().fingerprint().headers();
		return this.claims.claim(claiming.storageKey(), this.settings.conflictWaitTimeout())
			.map((claim) -> this.flow.decide(claim, claiming.fingerprint()::equals, headers))
			.onErrorResume((ex) -> {
				logStoreFailure(ex);
				return Mono.just(this.flow.storeFailed(this.settings.failOpen()));
			})
			.flatMap((decision) -> answer(exchange, chain, claiming, decision));
	}

	private Mono<Void> answer(ServerWebExchange exchange, WebFilterChain chain, Claiming claiming,
			RequestFlow.Decision<ReactiveHold> decision) {
		if (decision instanceof RequestFlow.Execute<ReactiveHold> execute) {
			return execute(exchange, chain, claiming.storageKey(),
					new ReactiveExecution(execute.hold(), this.flow, Mono.just(claiming.fingerprint()),
							claiming.policy(), new ExchangeProtectedRequest(exchange), this.responseFilters));
		}
		return answerUnclaimed(exchange, chain, decision);
	}

	/** Answers a decision that holds no claim: a replay, a rejection, or fail-open. */
	private Mono<Void> answerUnclaimed(ServerWebExchange exchange, WebFilterChain chain,
			RequestFlow.Decision<ReactiveHold> decision) {
		if (decision instanceof RequestFlow.Replay<ReactiveHold> replay) {
			return replay(exchange, chain, replay.record(), this.settings.failOpen());
		}
		if (decision instanceof RequestFlow.Reject<ReactiveHold> reject) {
			return reject(exchange, reject.rejection());
		}
		onRequest(exchange, RequestOutcome.UNPROTECTED);
		return chain.filter(exchange);
	}

	private void logStoreFailure(Throwable ex) {
		if (this.settings.failOpen()) {
			logger.warn("Idempotency store failed; running the handler unprotected (fail-open)", ex);
		}
		else {
			logger.warn("Idempotency store failed; refusing the request (fail-closed)", ex);
		}
	}

	/**
	 * Runs the handler under the claim, with the execution in its pipeline's Reactor
	 * context, so that a {@code WebClient} call it makes sends a key derived from this
	 * one, the same on every run of the handler for this key; the execution is there too,
	 * and in the exchange's attributes, for {@link ReactiveIdempotentResponse}.
	 */
	private Mono<Void> execute(ServerWebExchange exchange, WebFilterChain chain, String storageKey,
			ReactiveExecution execution) {
		CapturingServerHttpResponse response = new CapturingServerHttpResponse(exchange.getResponse(), execution,
				this.settings::isReplayable);
		ServerWebExchange protectedExchange = exchange.mutate().response(response).build();
		protectedExchange.getAttributes().put(ReactiveExecution.ATTRIBUTE, execution);
		execution.start();
		onRequest(exchange, RequestOutcome.EXECUTED);
		CurrentIdempotentCall current = CurrentIdempotentCall.of(storageKey);
		// a failure of the settle itself (a response filter's) ends the execution too
		return chain.filter(protectedExchange)
			.then(Mono.defer(response::settleWithoutBody))
			.onErrorResume((ex) -> execution.fail().then(Mono.error(ex)))
			.doOnCancel(execution::cancel)
			.contextWrite((context) -> context.put(CurrentIdempotentCall.CONTEXT_KEY, current)
				.put(ReactiveExecution.CONTEXT_KEY, execution));
	}

	/**
	 * Replays a record; one that cannot be read is a store failure, which runs the
	 * handler unprotected only if {@code failsOpen} (never for a request whose streamed
	 * body was read to compare it).
	 */
	private Mono<Void> replay(ServerWebExchange exchange, WebFilterChain chain, StoredRecord record,
			boolean failsOpen) {
		CapturedResponse stored;
		try {
			stored = ResponseEnvelope.decode(record.response());
		}
		catch (IllegalArgumentException ex) {
			if (failsOpen) {
				logStoreFailure(ex);
			}
			else {
				logger.warn("Idempotency store failed; refusing the request (fail-closed)", ex);
			}
			return answerUnclaimed(exchange, chain, this.flow.storeFailed(failsOpen));
		}
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
		HttpHeaders headers = response.getHeaders();
		stored.headers().forEach((name, values) -> {
			if (name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) && !values.isEmpty()) {
				headers.set(HttpHeaders.CONTENT_TYPE, values.get(0));
			}
			else if (this.settings.isReplayable(name) && !values.isEmpty()) {
				headers.put(name, List.copyOf(values));
			}
		});
		headers.set(this.settings.replayedHeader(), "true");
		onRequest(exchange, RequestOutcome.REPLAYED);
		if (this.observationRegistry.isNoop()) {
			return write(response, stored.body());
		}
		return Mono.deferContextual((context) -> {
			Observation observation = Observation.createNotStarted(REPLAY_OBSERVATION, this.observationRegistry)
				.contextualName("idempo replay")
				.lowCardinalityKeyValue("status", Integer.toString(stored.status()))
				.parentObservation(context.getOrDefault(ObservationThreadLocalAccessor.KEY, null))
				.start();
			return write(response, stored.body()).doOnError(observation::error)
				.doFinally((signal) -> observation.stop());
		});
	}

	/**
	 * Counts a protected request's outcome, and adds it to the server request's
	 * observation.
	 */
	private void onRequest(ServerWebExchange exchange, RequestOutcome outcome) {
		this.listener.onRequest(outcome);
		if (!this.observationRegistry.isNoop()) {
			ServerRequestObservationContext.findCurrent(exchange.getAttributes())
				.ifPresent((context) -> context.addHighCardinalityKeyValue(KeyValue.of(OUTCOME_KEY, outcome.tag())));
		}
	}

	private Mono<Void> reject(ServerWebExchange exchange, RequestFlow.Rejection rejection) {
		ServerHttpResponse response = exchange.getResponse();
		IdempotencyProblemType problem = rejection.problem();
		response.setStatusCode(HttpStatusCode.valueOf(problem.status()));
		HttpHeaders headers = response.getHeaders();
		if (rejection.retryAfter() != null) {
			headers.set(HttpHeaders.RETRY_AFTER, Long.toString(ProblemJson.seconds(rejection.retryAfter())));
		}
		headers.set(HttpHeaders.CONTENT_TYPE, ProblemJson.MEDIA_TYPE);
		onRequest(exchange, rejection.outcome());
		return write(response, ProblemJson.render(problem, rejection.detail(), new ExchangeProtectedRequest(exchange),
				this.problemCustomizers));
	}

	private static Mono<Void> write(ServerHttpResponse response, byte[] body) {
		response.getHeaders().setContentLength(body.length);
		return (body.length == 0) ? response.setComplete()
				: response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
	}

	private static byte[] bytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

	/**
	 * An exchange whose attributes are a copy of another's, for a handler lookup that
	 * must leave no trace on the exchange the dispatcher looks the handler up in again.
	 */
	private static final class PrivateAttributesExchange extends ServerWebExchangeDecorator {

		private final Map<String, Object> attributes;

		PrivateAttributesExchange(ServerWebExchange delegate) {
			super(delegate);
			this.attributes = new ConcurrentHashMap<>(delegate.getAttributes());
		}

		@Override
		public Map<String, Object> getAttributes() {
			return this.attributes;
		}

	}

	/**
	 * A request's fingerprint, {@code null} if its body is too large to take one, and the
	 * exchange the handler gets.
	 */
	private record Body(@Nullable String fingerprint, ServerWebExchange exchange) {
	}

	/**
	 * A protected request about to claim its key.
	 */
	private record Claiming(String storageKey, String fingerprint, IdempotentHandlerPolicies.Policy policy) {
	}

	/** The claim failed: the store is unreachable, timed out or answered nonsense. */
	private record StoreFailure(Throwable cause) {
	}

	/**
	 * A streamed body read to compare it with a record failed (the client went away, it
	 * ended short): not a store failure.
	 */
	private static final class BodyFailed extends RuntimeException {

		BodyFailed(Throwable cause) {
			super(cause.getMessage(), cause, false, false);
		}

	}

}
