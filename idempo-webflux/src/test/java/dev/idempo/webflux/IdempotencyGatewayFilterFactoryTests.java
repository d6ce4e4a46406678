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
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * How {@code idempo.routes} at a gateway recognises a route that carries the
 * {@code Idempotency} filter, and leaves it to that filter; a filter whose arguments it
 * cannot take fails naming its route; a body the gateway cached is recognised.
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
	void aTtlThatIsNoDurationFailsNamingTheRoute() {
		IdempotencyGatewayFilterFactory.Config config = new IdempotencyGatewayFilterFactory.Config();
		config.setTtl("soon");
		// as the gateway's RouteDefinitionRouteLocator applies a route's filters
		assertThatIllegalArgumentException().isThrownBy(() -> this.factory.apply("payments", config))
			.withMessageStartingWith("The Idempotency filter of the route 'payments' cannot be applied: ")
			.withMessageContaining("\"soon\" is not a duration")
			.withMessageContaining("such as 24h");
	}

	@Test
	void aTtlOutOfRangeFailsNamingTheRoute() {
		IdempotencyGatewayFilterFactory.Config config = new IdempotencyGatewayFilterFactory.Config();
		config.setTtl("0s");
		assertThatIllegalArgumentException().isThrownBy(() -> this.factory.apply("payments", config))
			.withMessageStartingWith("The Idempotency filter of the route 'payments' cannot be applied: ")
			.withMessageContaining("not a positive duration of at most 36500 days");
	}

	@Test
	void doesNotTakeAnotherFilterForOne() {
		GatewayFilter other = (exchange, chain) -> chain.filter(exchange);
		assertThat(IdempotencyGatewayFilterFactory.isIdempotencyFilter(other)).isFalse();
		assertThat(IdempotencyGatewayFilterFactory.isIdempotencyFilter(new OrderedGatewayFilter(other, 1))).isFalse();
	}

	/**
	 * The filter recognises a body the gateway cached by the gateway's attribute name,
	 * spelled out so that idempo-webflux does not need the gateway.
	 */
	@Test
	void theCachedBodyAttributeIsTheGateways() {
		assertThat(IdempotencyWebFilter.GATEWAY_CACHED_REQUEST_BODY_ATTR)
			.isEqualTo(ServerWebExchangeUtils.CACHED_REQUEST_BODY_ATTR);
	}

}
