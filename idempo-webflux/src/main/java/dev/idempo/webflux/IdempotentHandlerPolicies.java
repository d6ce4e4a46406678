package dev.idempo.webflux;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;
import dev.idempo.core.AnnotationTtls;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.IdempotentRoute;
import dev.idempo.core.ResponseStoragePolicy;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.StringValueResolver;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.function.server.HandlerFunction;

/**
 * Reads and caches the {@link Idempotent} settings of WebFlux handler methods, as Spring
 * MVC's {@code IdempotentHandlers} does: method-level wins over class-level, TTL
 * placeholders are resolved once. Transactional handlers are refused: a transaction bound
 * to a thread cannot follow a reactive handler. Requests whose handler carries no
 * {@link Idempotent} (functional endpoints, unannotated handler methods, and gateway
 * routes through {@link IdempotencyRoutesGlobalFilter}) are protected by the first
 * {@link IdempotentRoute} that matches them ({@code idempo.routes}), if any.
 *
 * @author idempo
 */
public class IdempotentHandlerPolicies {

	/**
	 * Keyed by method and bean type, not by HandlerMethod, which differs per prototype
	 * bean.
	 */
	private final Map<HandlerKey, Optional<Policy>> policies = new ConcurrentHashMap<>();

	private final StringValueResolver placeholderResolver;

	private final Duration defaultTtl;

	private final boolean defaultTransactional;

	private final ResponseStoragePolicy responses;

	private final FingerprintOptions fingerprint;

	private List<IdempotentRoute> routes = List.of();

	/** One policy per route, in the routes' order. */
	private List<Policy> routePolicies = List.of();

	/**
	 * Creates a registry.
	 * @param placeholderResolver resolves {@code ${...}} in TTLs
	 * @param defaultTtl the TTL of handlers that do not set one
	 * @param defaultTransactional whether every handler is transactional
	 * ({@code idempo.transactional}), which WebFlux handlers cannot be
	 * @param responses which statuses handlers store ({@code idempo.responses})
	 * @param fingerprint what handlers' fingerprints cover beyond the request line and
	 * body ({@code idempo.fingerprint})
	 */
	public IdempotentHandlerPolicies(StringValueResolver placeholderResolver, Duration defaultTtl,
			boolean defaultTransactional, ResponseStoragePolicy responses, FingerprintOptions fingerprint) {
		this.placeholderResolver = placeholderResolver;
		this.defaultTtl = defaultTtl;
		this.defaultTransactional = defaultTransactional;
		this.responses = responses;
		this.fingerprint = fingerprint;
	}

	/**
	 * Protects the requests that match these routes and whose handler carries no
	 * {@link Idempotent}: the first route that matches a request applies.
	 * @param routes the routes, in order
	 * @throws IllegalArgumentException if a route's TTL is not a positive duration of at
	 * most 36500 days
	 */
	public void setRoutes(List<IdempotentRoute> routes) {
		List<IdempotentRoute> copy = List.copyOf(routes);
		this.routePolicies = copy.stream().map(this::routePolicy).toList();
		this.routes = copy;
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
	 * handler method or a functional endpoint ({@link HandlerFunction}). Other handlers
	 * (static resources, the gateway's) never take part here.
	 * @param request the request
	 * @param handler its handler
	 * @return its policy, or {@code null} if it is not protected
	 * @throws IdempotentWebFluxHandlerException as {@link #policy(HandlerMethod)}
	 */
	public @Nullable Policy policy(ServerHttpRequest request, Object handler) {
		if (handler instanceof HandlerMethod handlerMethod) {
			Policy policy = policy(handlerMethod);
			return (policy != null) ? policy : routePolicy(request);
		}
		return (handler instanceof HandlerFunction<?>) ? routePolicy(request) : null;
	}

	/**
	 * The policy of the first route that matches a request, whatever its handler: its
	 * path within the application matches the route's pattern and its method is one of
	 * the route's.
	 * @param request the request
	 * @return the route's policy, or {@code null} if no route matches
	 */
	public @Nullable Policy routePolicy(ServerHttpRequest request) {
		if (this.routes.isEmpty()) {
			return null;
		}
		PathContainer path = request.getPath().pathWithinApplication();
		String method = request.getMethod().name();
		for (int i = 0; i < this.routes.size(); i++) {
			if (this.routes.get(i).matches(path, method)) {
				return this.routePolicies.get(i);
			}
		}
		return null;
	}

	/**
	 * The policy of a handler method.
	 * @param handlerMethod the handler method
	 * @return its policy, or {@code null} if it is not {@link Idempotent}
	 * @throws IdempotentWebFluxHandlerException if its TTL is not a positive duration of
	 * at most 36500 days, or it is transactional
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
	 * The policy of a route that idempo protects by configuration (a gateway route's
	 * {@code Idempotency} filter): the application's responses and fingerprint settings.
	 * @param ttl how long its responses are kept, {@code null} for the default TTL
	 * @param required whether requests without a key are refused
	 * @return the policy
	 */
	public Policy routePolicy(@Nullable Duration ttl, boolean required) {
		Duration resolved = (ttl != null) ? ttl : this.defaultTtl;
		if (!IdempotencySettings.isValidTtl(resolved)) {
			throw new IllegalArgumentException(
					"The TTL " + resolved + " is not a positive duration of at most 36500 days (100 years)");
		}
		return new Policy(resolved, true, required, this.responses, this.fingerprint);
	}

	private Policy routePolicy(IdempotentRoute route) {
		IdempotentRoute.Settings settings = route.settings();
		Duration ttl = (settings.ttl() != null) ? settings.ttl() : this.defaultTtl;
		if (!IdempotencySettings.isValidTtl(ttl)) {
			throw new IllegalArgumentException("The TTL " + ttl + " of the route " + route
					+ " is not a positive duration of at most 36500 days (100 years)");
		}
		ResponseStoragePolicy responses = settings.responses();
		FingerprintOptions fingerprint = settings.fingerprint();
		return new Policy(ttl, settings.cacheResponse(), settings.required(),
				(responses != null) ? responses : this.responses,
				(fingerprint != null) ? fingerprint : this.fingerprint);
	}

	private @Nullable Policy resolve(HandlerMethod handlerMethod) {
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getMethod(), Idempotent.class);
		if (idempotent == null) {
			idempotent = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getBeanType(), Idempotent.class);
		}
		if (idempotent == null) {
			return null;
		}
		if (idempotent.transactional() || this.defaultTransactional) {
			throw transactional(idempotent.transactional(), handlerMethod);
		}
		return new Policy(ttl(idempotent, handlerMethod), idempotent.cacheResponse(), idempotent.required(),
				this.responses, this.fingerprint);
	}

	private IdempotentWebFluxHandlerException transactional(boolean annotated, HandlerMethod handlerMethod) {
		String how = annotated ? "@Idempotent(transactional = true)" : "idempo.transactional=true";
		String action;
		if (!annotated) {
			action = "Set idempo.transactional=false: WebFlux handlers cannot be transactional.";
		}
		else if (this.defaultTransactional) {
			action = "Remove transactional = true from the handler and set idempo.transactional=false, or serve "
					+ "the handler from a Spring MVC application (spring-boot-starter-webmvc) on the postgres or "
					+ "mysql store.";
		}
		else {
			action = "Remove transactional = true from the handler, or serve it from a Spring MVC application "
					+ "(spring-boot-starter-webmvc) on the postgres or mysql store.";
		}
		return new IdempotentWebFluxHandlerException(handlerMethod,
				how + " on the WebFlux handler " + handlerMethod
						+ " is not supported: a transaction is bound to one thread, and a reactive handler is not",
				action, null);
	}

	private Duration ttl(Idempotent idempotent, HandlerMethod handlerMethod) {
		return AnnotationTtls.resolve(idempotent.ttl(), this.defaultTtl, this.placeholderResolver, handlerMethod,
				(problem, action, cause) -> new IdempotentWebFluxHandlerException(handlerMethod, problem, action,
						cause));
	}

	private record HandlerKey(Method method, Class<?> beanType) {
	}

	/**
	 * The resolved settings of one {@link Idempotent} WebFlux handler method, or of a
	 * route protected by configuration.
	 *
	 * @param ttl how long its responses are kept
	 * @param cacheResponse whether its responses are stored
	 * @param required whether it requires a key
	 * @param responses which statuses of its responses are stored
	 * @param fingerprint what its requests' fingerprints cover
	 */
	public record Policy(Duration ttl, boolean cacheResponse, boolean required, ResponseStoragePolicy responses,
			FingerprintOptions fingerprint) {
	}

}
