package dev.idempo.webflux;

import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.ProtectedRequest;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * A WebFlux exchange's request as the stack-neutral hooks see it.
 *
 * @author idempo
 */
final class ExchangeProtectedRequest implements ProtectedRequest {

	private final ServerWebExchange exchange;

	ExchangeProtectedRequest(ServerWebExchange exchange) {
		this.exchange = exchange;
	}

	private ServerHttpRequest request() {
		return this.exchange.getRequest();
	}

	@Override
	public String method() {
		return request().getMethod().name();
	}

	@Override
	public String path() {
		return request().getURI().getRawPath();
	}

	@Override
	public @Nullable String rawQuery() {
		return request().getURI().getRawQuery();
	}

	@Override
	public List<String> headers(String name) {
		return request().getHeaders().getOrEmpty(name);
	}

	@Override
	public @Nullable Object attribute(String name) {
		return this.exchange.getAttribute(name);
	}

	@Override
	public <T> @Nullable T unwrap(Class<T> type) {
		return type.isInstance(this.exchange) ? type.cast(this.exchange) : null;
	}

	@Override
	public String toString() {
		return method() + " " + path();
	}

}
