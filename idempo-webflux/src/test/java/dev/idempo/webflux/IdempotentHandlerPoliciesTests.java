package dev.idempo.webflux;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotentRoute;
import dev.idempo.core.ResponseStoragePolicy;

import org.springframework.http.HttpMethod;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * How {@link IdempotentHandlerPolicies} chooses a request's policy: {@code @Idempotent}
 * wins, else the first {@code idempo.routes} entry that matches the path within the
 * application and the method, for handler methods and functional endpoints only.
 *
 * @author idempo
 */
class IdempotentHandlerPoliciesTests {

	private static final HandlerFunction<ServerResponse> FUNCTION = (request) -> ServerResponse.ok().build();

	private final IdempotentHandlerPolicies policies = new IdempotentHandlerPolicies((value) -> value,
			Duration.ofHours(24), false, ResponseStoragePolicy.DEFAULT, FingerprintOptions.NONE);

	IdempotentHandlerPoliciesTests() {
		this.policies.setRoutes(List.of(
				new IdempotentRoute("/payments/{id}/refunds", List.of("POST"),
						new IdempotentRoute.Settings(Duration.ofDays(7), true, true)),
				new IdempotentRoute("/payments/**", List.of("POST", "PUT"),
						new IdempotentRoute.Settings(null, false, false))));
	}

	@Test
	void theFirstMatchingRouteAppliesToAFunctionalEndpoint() {
		IdempotentHandlerPolicies.Policy refund = this.policies.policy(post("/payments/7/refunds"), FUNCTION);
		assertThat(refund).isNotNull();
		assertThat(refund.ttl()).isEqualTo(Duration.ofDays(7));
		assertThat(refund.required()).isTrue();
		IdempotentHandlerPolicies.Policy payment = this.policies.policy(post("/payments/7"), FUNCTION);
		assertThat(payment).isNotNull();
		assertThat(payment.ttl()).isEqualTo(Duration.ofHours(24));
		assertThat(payment.cacheResponse()).isFalse();
	}

	@Test
	void aRouteMatchesOnlyItsMethodsAndItsPathWithinTheApplication() {
		assertThat(this.policies.policy(request(HttpMethod.DELETE, "/payments/7"), FUNCTION)).isNull();
		assertThat(this.policies.policy(post("/orders/7"), FUNCTION)).isNull();
		MockServerHttpRequest underContext = MockServerHttpRequest.post("/shop/payments/7")
			.contextPath("/shop")
			.build();
		assertThat(this.policies.policy(underContext, FUNCTION)).isNotNull();
	}

	@Test
	void theAnnotationWinsOverARoute() throws Exception {
		HandlerMethod annotated = new HandlerMethod(new Handlers(), Handlers.class.getDeclaredMethod("annotated"));
		IdempotentHandlerPolicies.Policy policy = this.policies.policy(post("/payments/7"), annotated);
		assertThat(policy).isNotNull();
		assertThat(policy.ttl()).isEqualTo(Duration.ofMinutes(5));
		assertThat(policy.cacheResponse()).isTrue();
	}

	@Test
	void aHandlerMethodWithoutTheAnnotationTakesTheRoute() throws Exception {
		HandlerMethod plain = new HandlerMethod(new Handlers(), Handlers.class.getDeclaredMethod("plain"));
		IdempotentHandlerPolicies.Policy policy = this.policies.policy(post("/payments/7"), plain);
		assertThat(policy).isNotNull();
		assertThat(policy.cacheResponse()).isFalse();
		assertThat(this.policies.policy(post("/orders"), plain)).isNull();
	}

	@Test
	void otherHandlersNeverTakePart() {
		assertThat(this.policies.policy(post("/payments/7"), new Object())).isNull();
		// whatever the handler, as the gateway's global filter asks
		assertThat(this.policies.routePolicy(post("/payments/7"))).isNotNull();
	}

	@Test
	void aRouteWithAnInvalidTtlIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.policies.setRoutes(List.of(new IdempotentRoute("/x",
				List.of("POST"), new IdempotentRoute.Settings(Duration.ofDays(40000), false, true)))))
			.withMessageContaining("/x");
	}

	private static MockServerHttpRequest post(String path) {
		return request(HttpMethod.POST, path);
	}

	private static MockServerHttpRequest request(HttpMethod method, String path) {
		return MockServerHttpRequest.method(method, path).build();
	}

	static class Handlers {

		@Idempotent(ttl = "5m")
		Mono<String> annotated() {
			return Mono.just("annotated");
		}

		Mono<String> plain() {
			return Mono.just("plain");
		}

	}

}
