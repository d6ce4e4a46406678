package dev.idempo.webflux;

import java.time.Duration;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import dev.idempo.core.IdempotencySettings;

import org.springframework.util.Assert;
import org.springframework.web.server.ServerWebExchange;

/**
 * Lets a WebFlux handler decide, for the response it is producing, how long it is kept or
 * that it is not kept at all, the way the annotation does for every response of the
 * handler: Spring MVC's {@code IdempotentResponse}, for a stack with no request thread.
 * The protected request's execution is found in the Reactor context of the handler's
 * pipeline (the {@code Mono} methods, composed into what the handler returns) or in the
 * exchange's attributes (the {@code ServerWebExchange} methods, for a handler that has
 * the exchange or a functional endpoint's {@code ServerRequest.exchange()}). Either must
 * be called before the handler's response is written. Outside a protected request (no
 * key, not {@code @Idempotent}, not a route of {@code idempo.routes}) they do nothing and
 * answer {@code false}. Nothing here blocks.
 *
 * <pre class="code">
 * &#64;PostMapping("/quotes")
 * &#64;Idempotent
 * Mono&lt;Quote&gt; quote(&#64;RequestBody QuoteRequest request) {
 *     return quotes.create(request).flatMap((quote) -&gt; ReactiveIdempotentResponse
 *         .ttl(Duration.between(Instant.now(), quote.validUntil()))
 *         .thenReturn(quote));
 * }
 * </pre>
 *
 * @author idempo
 */
public final class ReactiveIdempotentResponse {

	private ReactiveIdempotentResponse() {
	}

	/**
	 * Keeps the current response for {@code ttl} instead of the handler's TTL, for the
	 * request whose pipeline subscribes to the answer.
	 * @param ttl how long it is replayed, positive and at most 100 years
	 * @return whether the current request is protected (and the TTL applied), once
	 * subscribed
	 */
	public static Mono<Boolean> ttl(Duration ttl) {
		checkTtl(ttl);
		return fromContext((execution) -> execution.overrideTtl(ttl));
	}

	/**
	 * Does not keep the current response, for the request whose pipeline subscribes to
	 * the answer: the key is released once the response is written, and a retry runs the
	 * handler again (counted as {@code reason=refused}).
	 * @return whether the current request is protected (and storing refused), once
	 * subscribed
	 */
	public static Mono<Boolean> doNotStore() {
		return fromContext(ReactiveExecution::refuseStoring);
	}

	/**
	 * Keeps the response of {@code exchange} for {@code ttl} instead of the handler's
	 * TTL.
	 * @param exchange the exchange the handler serves
	 * @param ttl how long it is replayed, positive and at most 100 years
	 * @return whether the request is protected (and the TTL applied)
	 */
	public static boolean ttl(ServerWebExchange exchange, Duration ttl) {
		checkTtl(ttl);
		return apply(exchange.getAttribute(ReactiveExecution.ATTRIBUTE), (execution) -> execution.overrideTtl(ttl));
	}

	/**
	 * Does not keep the response of {@code exchange}: the key is released once it is
	 * written, and a retry runs the handler again (counted as {@code reason=refused}).
	 * @param exchange the exchange the handler serves
	 * @return whether the request is protected (and storing refused)
	 */
	public static boolean doNotStore(ServerWebExchange exchange) {
		return apply(exchange.getAttribute(ReactiveExecution.ATTRIBUTE), ReactiveExecution::refuseStoring);
	}

	private static void checkTtl(@Nullable Duration ttl) {
		Assert.isTrue(ttl != null && IdempotencySettings.isValidTtl(ttl), "'ttl' must be positive and at most 36500d");
	}

	private static Mono<Boolean> fromContext(Consumer<ReactiveExecution> action) {
		return Mono.deferContextual(
				(context) -> Mono.just(apply(context.getOrDefault(ReactiveExecution.CONTEXT_KEY, null), action)));
	}

	private static boolean apply(@Nullable Object candidate, Consumer<ReactiveExecution> action) {
		if (candidate instanceof ReactiveExecution execution) {
			action.accept(execution);
			return true;
		}
		return false;
	}

}
