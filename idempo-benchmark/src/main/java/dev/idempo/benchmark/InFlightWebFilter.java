package dev.idempo.benchmark;

import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * The WebFlux counterpart of {@link InFlightFilter}: counts the measured requests in
 * progress (everything outside {@code /bench/} and {@code /actuator/}) until their
 * exchange completes, is cancelled or fails. The outermost web filter.
 *
 * @author idempo
 */
class InFlightWebFilter implements WebFilter, Ordered {

	private final BenchmarkCounters counters;

	InFlightWebFilter(BenchmarkCounters counters) {
		this.counters = counters;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		String path = exchange.getRequest().getPath().value();
		if (path.startsWith("/bench/") || path.startsWith("/actuator/")) {
			return chain.filter(exchange);
		}
		return Mono.defer(() -> {
			this.counters.inFlight().incrementAndGet();
			return chain.filter(exchange).doFinally((signal) -> this.counters.inFlight().decrementAndGet());
		});
	}

}
