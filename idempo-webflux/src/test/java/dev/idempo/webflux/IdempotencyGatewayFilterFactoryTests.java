package dev.idempo.webflux;

import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.store.OffloadedLockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@code idempo.routes} at a gateway recognises a route that carries the
 * {@code Idempotency} filter, and leaves it to that filter.
 *
 * @author idempo
 */
class IdempotencyGatewayFilterFactoryTests {

	private final IdempotentHandlerPolicies policies = new IdempotentHandlerPolicies((value) -> value,
			Duration.ofHours(1), false, ResponseStoragePolicy.DEFAULT, FingerprintOptions.NONE);

	private final IdempotencyGatewayFilterFactory factory = new IdempotencyGatewayFilterFactory(
			new IdempotencyWebFilter(new OffloadedLockingStore(new InMemoryLockingStore(Clock.systemUTC(), 10, 1024)),
					this.policies, (exchange) -> Mono.empty(), new DefaultReactiveCallerScopeResolver(),
					IdempotencyListener.NONE, IdempotencySettings.defaults(), new LeaseRenewer()),
			this.policies);

	@Test
	void recognisesItsFiltersHoweverTheyAreWrapped() {
		GatewayFilter filter = this.factory.apply(new IdempotencyGatewayFilterFactory.Config());
		assertThat(IdempotencyGatewayFilterFactory.isIdempotencyFilter(filter)).isTrue();
		assertThat(IdempotencyGatewayFilterFactory.isIdempotencyFilter(new OrderedGatewayFilter(filter, 5))).isTrue();
		assertThat(filter.toString()).contains("Idempotency");
	}

	@Test
	void doesNotTakeAnotherFilterForOne() {
		GatewayFilter other = (exchange, chain) -> chain.filter(exchange);
		assertThat(IdempotencyGatewayFilterFactory.isIdempotencyFilter(other)).isFalse();
		assertThat(IdempotencyGatewayFilterFactory.isIdempotencyFilter(new OrderedGatewayFilter(other, 1))).isFalse();
	}

}
