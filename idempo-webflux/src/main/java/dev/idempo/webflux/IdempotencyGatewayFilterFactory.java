package dev.idempo.webflux;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.support.HasRouteId;
import org.springframework.util.StringUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * The Spring Cloud Gateway (server-webflux) route filter {@code Idempotency}: the request
 * flow of {@code @Idempotent} handlers in front of any backend, whatever it runs on. The
 * gateway claims the key, forwards the first request, stores the backend's response and
 * replays it to every retry; a retry while the first is forwarded gets {@code 409}.
 * <pre class="code">
 * spring.cloud.gateway.server.webflux.routes:
 *   - id: payments
 *     uri: http://payments.internal:8080
 *     predicates:
 *       - Path=/payments/**
 *     filters:
 *       - Idempotency=24h,true
 * </pre> Arguments, by name or in this order: {@code ttl} (a duration such as
 * {@code 24h}; the default is {@code idempo.response-ttl}) and {@code required} (whether
 * a request without a key is refused with {@code 400}; default {@code false}, as
 * {@code @Idempotent}). Which responses are stored and what the fingerprint covers follow
 * {@code idempo.responses} and {@code idempo.fingerprint}.
 *
 * @author idempo
 */
public class IdempotencyGatewayFilterFactory
		extends AbstractGatewayFilterFactory<IdempotencyGatewayFilterFactory.Config> {

	/** Just before the gateway's {@code NettyWriteResponseFilter}. */
	static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

	private final IdempotencyWebFilter filter;

	private final IdempotentHandlerPolicies policies;

	/**
	 * Creates the factory.
	 * @param filter the request flow
	 * @param policies the application's settings of protected routes
	 */
	public IdempotencyGatewayFilterFactory(IdempotencyWebFilter filter, IdempotentHandlerPolicies policies) {
		super(Config.class);
		this.filter = filter;
		this.policies = policies;
	}

	@Override
	public List<String> shortcutFieldOrder() {
		return List.of("ttl", "required");
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The filter runs before the gateway's {@code NettyWriteResponseFilter}, which writes
	 * the backend's response to the response of the exchange it was given: only then is
	 * that the response idempo captures and stores.
	 */
	@Override
	public GatewayFilter apply(Config config) {
		IdempotentHandlerPolicies.Policy policy;
		try {
			policy = this.policies.routePolicy(config.ttl(), config.isRequired());
		}
		catch (IllegalArgumentException ex) {
			// the gateway reports a route that fails to load without saying which one it
			// was
			throw new IllegalArgumentException("The Idempotency filter of the route "
					+ ((config.getRouteId() != null) ? "'" + config.getRouteId() + "'" : "(no route id)")
					+ " cannot be applied: " + ex.getMessage()
					+ ". Give it a ttl such as 24h, PT30M or 90s, positive and at most 36500d, or none for "
					+ "idempo.response-ttl.", ex);
		}
		return new OrderedGatewayFilter(new Protecting(this.filter, policy), ORDER);
	}

	/**
	 * Whether a route's filter is an {@code Idempotency} filter, which then protects the
	 * route with its own settings and {@code idempo.routes} leaves it alone.
	 * @param filter one of a route's filters
	 * @return whether this factory made it
	 */
	static boolean isIdempotencyFilter(GatewayFilter filter) {
		GatewayFilter unwrapped = filter;
		while (unwrapped instanceof OrderedGatewayFilter ordered) {
			unwrapped = ordered.getDelegate();
		}
		return unwrapped instanceof Protecting;
	}

	/**
	 * An {@code Idempotency} filter: the request flow under its route's policy.
	 */
	private record Protecting(IdempotencyWebFilter filter,
			IdempotentHandlerPolicies.Policy policy) implements GatewayFilter {

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
			return this.filter.protect(exchange, chain::filter, this.policy);
		}

		@Override
		public String toString() {
			return "Idempotency[ttl = " + this.policy.ttl() + ", required = " + this.policy.required() + "]";
		}

	}

	/**
	 * The arguments of a route's {@code Idempotency} filter, and the id of its route,
	 * which the gateway sets (for the message of an argument it cannot take).
	 */
	public static class Config implements HasRouteId {

		private @Nullable String ttl;

		private boolean required;

		private @Nullable String routeId;

		/**
		 * The id of the route whose filter this is, set by the gateway.
		 * @return the route's id, {@code null} if the filter was made for no route
		 */
		@Override
		public @Nullable String getRouteId() {
			return this.routeId;
		}

		@Override
		public void setRouteId(@Nullable String routeId) {
			this.routeId = routeId;
		}

		/**
		 * How long the route's responses are kept, such as {@code 24h}.
		 * @return the TTL, {@code null} for {@code idempo.response-ttl}
		 */
		public @Nullable String getTtl() {
			return this.ttl;
		}

		public void setTtl(@Nullable String ttl) {
			this.ttl = ttl;
		}

		/**
		 * Whether a request without a key is refused with {@code 400}.
		 * @return whether a key is required
		 */
		public boolean isRequired() {
			return this.required;
		}

		public void setRequired(boolean required) {
			this.required = required;
		}

		@Nullable Duration ttl() {
			if (!StringUtils.hasText(this.ttl)) {
				return null;
			}
			try {
				return DurationStyle.detectAndParse(this.ttl.trim());
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException("its ttl \"" + this.ttl + "\" is not a duration", ex);
			}
		}

	}

}
