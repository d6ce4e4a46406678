package dev.idempo.web;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;
import dev.idempo.core.AnnotationTtls;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotentRoute;
import dev.idempo.core.ResponseStoragePolicy;

import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.util.StringValueResolver;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Reads and caches the {@link Idempotent} settings of handler methods: method-level wins
 * over class-level, TTL placeholders are resolved once. Requests whose handler carries no
 * {@link Idempotent} (functional endpoints, gateway routes, unannotated handler methods)
 * are protected by the first {@link IdempotentRoute} that matches them
 * ({@code idempo.routes}), if any.
 *
 * @author idempo
 */
public class IdempotentHandlers {

	private static final Log logger = LogFactory.getLog(IdempotentHandlers.class);

	/** Requests with these methods pass through untouched, annotated or not. */
	private static final Set<RequestMethod> SAFE_METHODS = EnumSet.of(RequestMethod.GET, RequestMethod.HEAD,
			RequestMethod.OPTIONS, RequestMethod.TRACE);

	/**
	 * Keyed by method and bean type, not by HandlerMethod, which differs per prototype
	 * bean.
	 */
	private final Map<HandlerKey, Optional<Policy>> policies = new ConcurrentHashMap<>();

	private final StringValueResolver placeholderResolver;

	private final Duration defaultTtl;

	private final boolean defaultTransactional;

	private final @Nullable String transactionalUnavailable;

	private final ResponseStoragePolicy defaultResponses;

	private final FingerprintOptions defaultFingerprint;

	private List<IdempotentRoute> routes = List.of();

	/** One policy per route, for handlers whose return type says nothing. */
	private List<Policy> routePolicies = List.of();

	/**
	 * Creates a registry without transactional handlers.
	 * @param placeholderResolver resolves {@code ${...}} in TTLs
	 * @param defaultTtl the TTL of handlers that do not set one
	 */
	public IdempotentHandlers(StringValueResolver placeholderResolver, Duration defaultTtl) {
		this(placeholderResolver, defaultTtl, false, "no transactional support was configured");
	}

	/**
	 * Creates a registry.
	 * @param placeholderResolver resolves {@code ${...}} in TTLs
	 * @param defaultTtl the TTL of handlers that do not set one
	 * @param defaultTransactional whether every handler is transactional
	 * ({@code idempo.transactional})
	 * @param transactionalUnavailable why transactional handlers cannot run here, or
	 * {@code null} if they can
	 */
	public IdempotentHandlers(StringValueResolver placeholderResolver, Duration defaultTtl,
			boolean defaultTransactional, @Nullable String transactionalUnavailable) {
		this(placeholderResolver, defaultTtl, defaultTransactional, transactionalUnavailable,
				ResponseStoragePolicy.DEFAULT, FingerprintOptions.NONE);
	}

	/**
	 * Creates a registry.
	 * @param placeholderResolver resolves {@code ${...}} in TTLs
	 * @param defaultTtl the TTL of handlers that do not set one
	 * @param defaultTransactional whether every handler is transactional
	 * ({@code idempo.transactional})
	 * @param transactionalUnavailable why transactional handlers cannot run here, or
	 * {@code null} if they can
	 * @param defaultResponses which statuses handlers store ({@code idempo.responses})
	 * @param defaultFingerprint what handlers' fingerprints cover beyond the request line
	 * and body ({@code idempo.fingerprint})
	 */
	public IdempotentHandlers(StringValueResolver placeholderResolver, Duration defaultTtl,
			boolean defaultTransactional, @Nullable String transactionalUnavailable,
			ResponseStoragePolicy defaultResponses, FingerprintOptions defaultFingerprint) {
		this.defaultResponses = defaultResponses;
		this.defaultFingerprint = defaultFingerprint;
		this.placeholderResolver = placeholderResolver;
		this.defaultTtl = defaultTtl;
		this.defaultTransactional = defaultTransactional;
		this.transactionalUnavailable = transactionalUnavailable;
	}

	/**
	 * Protects the requests that match these routes and whose handler carries no
	 * {@link Idempotent}: the first route that matches a request applies.
	 * @param routes the routes, in order
	 */
	public void setRoutes(List<IdempotentRoute> routes) {
		this.routes = List.copyOf(routes);
		this.routePolicies = this.routes.stream().map((route) -> routePolicy(route, false)).toList();
	}

	/**
	 * The routes, in order.
	 * @return the routes
	 */
	public List<IdempotentRoute> routes() {
		return this.routes;
	}

	/**
	 * The policy of a request's handler: its {@link Idempotent} if it is an annotated
	 * handler method, else the first route that matches the request, if the handler is a
	 * handler method or a functional endpoint ({@link HandlerFunction}, which gateway
	 * routes are too). Other handlers (static resources) never take part.
	 * @param request the request
	 * @param handler its handler
	 * @return its policy, or {@code null} if it is not protected
	 * @throws IdempotentHandlerException as {@link #policy(HandlerMethod)}
	 */
	public @Nullable Policy policy(HttpServletRequest request, Object handler) {
		if (handler instanceof HandlerMethod handlerMethod) {
			Policy policy = policy(handlerMethod);
			if (policy != null || this.routes.isEmpty()) {
				return policy;
			}
			int route = routeIndex(request);
			return (route < 0) ? null : routePolicy(this.routes.get(route), isStreaming(handlerMethod.getReturnType()));
		}
		if (!(handler instanceof HandlerFunction<?>) || this.routes.isEmpty()) {
			return null;
		}
		int route = routeIndex(request);
		return (route < 0) ? null : this.routePolicies.get(route);
	}

	/**
	 * The policy a handler method is documented with: its {@link Idempotent}, else that
	 * of the first route that matches one of its mapped paths (each taken as a path, a
	 * URI variable as a segment) with one of its methods.
	 * @param handlerMethod the handler method
	 * @param paths the paths it is mapped to
	 * @param methods the request methods it is mapped to
	 * @return its policy, or {@code null} if it is not protected
	 * @throws IdempotentHandlerException as {@link #policy(HandlerMethod)}
	 */
	public @Nullable Policy policy(HandlerMethod handlerMethod, Collection<String> paths, Collection<String> methods) {
		Policy policy = policy(handlerMethod);
		if (policy != null) {
			return policy;
		}
		for (IdempotentRoute route : this.routes) {
			for (String path : paths) {
				PathContainer container = PathContainer.parsePath(path);
				if (methods.stream().anyMatch((method) -> route.matches(container, method))) {
					return routePolicy(route, isStreaming(handlerMethod.getReturnType()));
				}
			}
		}
		return null;
	}

	private int routeIndex(HttpServletRequest request) {
		// parsed by the DispatcherServlet, since Spring MVC's mappings use path patterns
		PathContainer path = (ServletRequestPathUtils.hasParsedRequestPath(request)
				? ServletRequestPathUtils.getParsedRequestPath(request)
				: RequestPath.parse(request.getRequestURI(), request.getContextPath()))
			.pathWithinApplication();
		String method = request.getMethod();
		for (int i = 0; i < this.routes.size(); i++) {
			if (this.routes.get(i).matches(path, method)) {
				return i;
			}
		}
		return -1;
	}

	private Policy routePolicy(IdempotentRoute route, boolean streaming) {
		IdempotentRoute.Settings settings = route.settings();
		ResponseStoragePolicy responses = settings.responses();
		FingerprintOptions fingerprint = settings.fingerprint();
		return new Policy((settings.ttl() != null) ? settings.ttl() : this.defaultTtl, settings.cacheResponse(),
				settings.required(), streaming, false, (responses != null) ? responses : this.defaultResponses,
				(fingerprint != null) ? fingerprint : this.defaultFingerprint);
	}

	/**
	 * The policy of a handler method.
	 * @param handlerMethod the handler method
	 * @return its policy, or {@code null} if it is not {@link Idempotent}
	 * @throws IdempotentHandlerException if its TTL is not a positive duration of at most
	 * 36500 days, or it is transactional where it cannot be
	 */
	public @Nullable Policy policy(HandlerMethod handlerMethod) {
		HandlerKey key = new HandlerKey(handlerMethod.getMethod(), handlerMethod.getBeanType());
		Optional<Policy> policy = this.policies.get(key);
		if (policy == null) {
			policy = this.policies.computeIfAbsent(key, (k) -> Optional.ofNullable(resolve(handlerMethod)));
		}
		return policy.orElse(null);
	}

	/**
	 * Logs a warning if the handler's own {@link Idempotent} protects nothing because it
	 * is mapped to GET, HEAD, OPTIONS or TRACE only, which pass through untouched. Called
	 * once per mapped handler at start-up. A class-level annotation is left alone: it
	 * protects the class's other handlers, and its safe ones are expected.
	 * @param handlerMethod the handler
	 * @param methods the request methods it is mapped to (empty: every method)
	 */
	public void warnIfOnlySafeMethods(HandlerMethod handlerMethod, Set<RequestMethod> methods) {
		if (!methods.isEmpty() && SAFE_METHODS.containsAll(methods)
				&& AnnotatedElementUtils.hasAnnotation(handlerMethod.getMethod(), Idempotent.class)) {
			String mapped = methods.stream().sorted().map(RequestMethod::name).collect(Collectors.joining(", "));
			logger.warn("@Idempotent on the handler " + handlerMethod + " protects nothing: it is mapped to " + mapped
					+ " only, and GET, HEAD, OPTIONS and TRACE requests pass through untouched. Map it to POST, PUT, "
					+ "PATCH or DELETE, or remove the annotation.");
		}
	}

	private @Nullable Policy resolve(HandlerMethod handlerMethod) {
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getMethod(), Idempotent.class);
		if (idempotent == null) {
			idempotent = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getBeanType(), Idempotent.class);
		}
		if (idempotent == null) {
			return null;
		}
		boolean transactional = idempotent.transactional() || this.defaultTransactional;
		if (transactional) {
			checkTransactional(idempotent, handlerMethod);
		}
		return new Policy(ttl(idempotent, handlerMethod), idempotent.cacheResponse(), idempotent.required(),
				isStreaming(handlerMethod.getReturnType()), transactional, this.defaultResponses,
				this.defaultFingerprint);
	}

	private void checkTransactional(Idempotent idempotent, HandlerMethod handlerMethod) {
		String how = idempotent.transactional() ? "@Idempotent(transactional = true)" : "idempo.transactional=true";
		if (this.transactionalUnavailable != null) {
			throw new IdempotentHandlerException(handlerMethod,
					how + " on " + handlerMethod + " needs the postgres or mysql store: "
							+ this.transactionalUnavailable,
					"Set idempo.store.type to postgres or mysql (the records must live in the database the handler "
							+ "writes to), or remove transactional = true from the handler"
							+ (idempotent.transactional() ? "" : " and set idempo.transactional=false"));
		}
		if (!idempotent.cacheResponse()) {
			throw new IdempotentHandlerException(handlerMethod,
					how + " on " + handlerMethod + " cannot be combined with cacheResponse = false: a "
							+ "transactional handler's writes commit only together with the record that answers "
							+ "its retries",
					"Remove cacheResponse = false, or make the handler non-transactional.");
		}
		Integer unstored = this.defaultResponses.firstUnstoredSuccess();
		if (unstored != null) {
			throw new IdempotentHandlerException(handlerMethod,
					how + " on " + handlerMethod + " needs every 2xx response stored, but idempo.responses does not "
							+ "store " + unstored + ": its writes would be rolled back while the client is told "
							+ "they succeeded",
					"Store every 2xx status (idempo.responses.stored includes 2xx, idempo.responses.not-stored "
							+ "names none), or make the handler non-transactional.");
		}
		if (isAsynchronous(handlerMethod.getReturnType())) {
			throw new IdempotentHandlerException(handlerMethod,
					how + " on " + handlerMethod + " cannot run a handler that returns "
							+ handlerMethod.getReturnType().getParameterType().getSimpleName()
							+ ": its transaction is bound to the request thread, and an asynchronous or streaming "
							+ "response would be written after it ended",
					"Return the response body or a ResponseEntity from the handler, or make it non-transactional.");
		}
	}

	private Duration ttl(Idempotent idempotent, HandlerMethod handlerMethod) {
		return AnnotationTtls.resolve(idempotent.ttl(), this.defaultTtl, this.placeholderResolver, handlerMethod,
				(problem, action, cause) -> new IdempotentHandlerException(handlerMethod, problem, action));
	}

	/**
	 * The type of what the handler returns, the body's for a {@code ResponseEntity};
	 * {@code null} if it cannot be resolved.
	 */
	private static @Nullable Class<?> valueType(MethodParameter returnType) {
		Class<?> type = returnType.getParameterType();
		return HttpEntity.class.isAssignableFrom(type)
				? ResolvableType.forMethodParameter(returnType).getGeneric(0).resolve() : type;
	}

	private static boolean isStreaming(MethodParameter returnType) {
		Class<?> type = valueType(returnType);
		if (type == null) {
			return false;
		}
		if (StreamingResponseBody.class.isAssignableFrom(type) || ResponseBodyEmitter.class.isAssignableFrom(type)) {
			return true;
		}
		// Spring MVC writes single-value reactive types (Mono) like a DeferredResult:
		// stored
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(type);
		return adapter != null && adapter.isMultiValue();
	}

	/**
	 * Whether the handler's response is produced after the handler returns (an
	 * asynchronous or streaming return value), declared as such.
	 */
	private static boolean isAsynchronous(MethodParameter returnType) {
		Class<?> type = valueType(returnType);
		if (type == null) {
			return false;
		}
		return Callable.class.isAssignableFrom(type) || WebAsyncTask.class.isAssignableFrom(type)
				|| DeferredResult.class.isAssignableFrom(type) || CompletionStage.class.isAssignableFrom(type)
				|| Future.class.isAssignableFrom(type) || StreamingResponseBody.class.isAssignableFrom(type)
				|| ResponseBodyEmitter.class.isAssignableFrom(type)
				|| ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null;
	}

	/**
	 * Looked up for every POST, PUT, PATCH and DELETE, protected or not: it compares the
	 * method by identity before {@code Method.equals} (which compares return and
	 * parameter types every time), and keeps its hash. A record's generated equals and
	 * hashCode showed in profiles of unannotated handlers.
	 */
	private static final class HandlerKey {

		private final Method method;

		private final Class<?> beanType;

		private final int hash;

		HandlerKey(Method method, Class<?> beanType) {
			this.method = method;
			this.beanType = beanType;
			this.hash = 31 * method.hashCode() + beanType.hashCode();
		}

		@Override
		public boolean equals(Object other) {
			return other == this || (other instanceof HandlerKey that && this.beanType == that.beanType
					&& (this.method == that.method || this.method.equals(that.method)));
		}

		@Override
		public int hashCode() {
			return this.hash;
		}

	}

	/**
	 * The resolved settings of one {@link Idempotent} handler method.
	 *
	 * @param ttl how long its responses are kept
	 * @param cacheResponse whether its responses are stored
	 * @param required whether it requires a key
	 * @param streaming whether it streams its response
	 * @param transactional whether it runs in one transaction with its response record
	 * @param responses which statuses of its responses are stored
	 * @param fingerprint what its requests' fingerprints cover
	 */
	public record Policy(Duration ttl, boolean cacheResponse, boolean required, boolean streaming,
			boolean transactional, ResponseStoragePolicy responses, FingerprintOptions fingerprint) {
	}

}
