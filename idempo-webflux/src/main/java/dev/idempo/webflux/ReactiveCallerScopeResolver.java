package dev.idempo.webflux;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Decides whose record a key belongs to in a WebFlux application: the reactive
 * counterpart of {@code dev.idempo.web.CallerScopeResolver}. Two requests with the same
 * key but different caller scopes never see each other's records. Declare a bean of this
 * type to replace the default ({@link DefaultReactiveCallerScopeResolver}).
 * <p>
 * Subscribed once per protected request that carries a key, after Spring Security's web
 * filters, before the key is claimed; it must not block. The scope is only ever hashed,
 * never stored or logged.
 *
 * @author idempo
 */
@FunctionalInterface
public interface ReactiveCallerScopeResolver {

	/**
	 * Returns the caller scope of a request.
	 * @param exchange the exchange
	 * @return one non-null scope; the same caller must always get the same value
	 */
	Mono<String> resolve(ServerWebExchange exchange);

}
