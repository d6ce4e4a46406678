package dev.idempo.webflux;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * {@code idempo.routes} at a Spring Cloud Gateway (server-webflux): a global filter that
 * runs a gateway route's request through the request flow under the first
 * {@code idempo.routes} entry that matches its path (within the application, as the
 * client sent it) and method, so the gateway replays and the backend runs once. A route
 * that carries the {@code Idempotency} filter ({@link IdempotencyGatewayFilterFactory})
 * is protected by that filter, with its settings, and not a second time here. It runs
 * where that filter runs, just before the gateway's {@code NettyWriteResponseFilter}.
 *
 * @author idempo
 */
public class IdempotencyRoutesGlobalFilter implements GlobalFilter, Ordered {

	private final IdempotencyWebFilter filter;

	private final IdempotentHandlerPolicies policies;

	/**
	 * Creates the filter.
	 * @param filter the request flow
	 * @param policies the configured routes ({@code idempo.routes})
	 */
	public IdempotencyRoutesGlobalFilter(IdempotencyWebFilter filter, IdempotentHandlerPolicies policies) {
		this.filter = filter;
		this.policies = policies;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		IdempotentHandlerPolicies.Policy policy = this.policies.routePolicy(exchange.getRequest());
		if (policy == null || hasIdempotencyFilter(exchange)) {
			return chain.filter(exchange);
		}
		return this.filter.protect(exchange, chain::filter, policy);
	}

	private static boolean hasIdempotencyFilter(ServerWebExchange exchange) {
		Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
		return route != null
				&& route.getFilters().stream().anyMatch(IdempotencyGatewayFilterFactory::isIdempotencyFilter);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The order of the {@code Idempotency} route filter: just before the gateway's
	 * {@code NettyWriteResponseFilter}, so that the response captured is the backend's.
	 */
	@Override
	public int getOrder() {
		return IdempotencyGatewayFilterFactory.ORDER;
	}

}
