package dev.idempo.actuate;

import java.time.Clock;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.actuate.IdempotencyEndpointAutoConfiguration;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.web.CallerScopeResolver;
import dev.idempo.web.DefaultCallerScopeResolver;
import dev.idempo.webflux.DefaultReactiveCallerScopeResolver;
import dev.idempo.webflux.ReactiveCallerScopeResolver;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Which caller scope the endpoint looks up: with the default resolvers, the scope they
 * give a request by the named principal or with the given {@code Authorization} value, on
 * Spring MVC and WebFlux alike; with another resolver, only the scope it is given, since
 * it cannot derive that resolver's scopes. The auto-configured endpoint knows which
 * resolver the application's web flow uses, WebFlux's included, and exists without one.
 */
class IdempotencyEndpointTests {

	private final InMemoryLockingStore store = new InMemoryLockingStore(Clock.systemUTC(), 100, 1 << 20);

	@Test
	void withACustomResolverOnlyTheScopeSelectsACaller() {
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store, false, false);
		assertThat(endpoint.record("k", "tenant:acme", null, null)).containsEntry("scope", "tenant:acme");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.record("k", null, "alice", null))
			.withMessageContaining("CallerScopeResolver");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.evict("k", null, null, "Bearer t"))
			.withMessageContaining("CallerScopeResolver");
	}

	@Test
	void withTheDefaultResolverTheScopesAreThoseItGivesRequests() {
		DefaultCallerScopeResolver resolver = new DefaultCallerScopeResolver();
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store, false);
		MockHttpServletRequest bearer = new MockHttpServletRequest("POST", "/payments");
		bearer.addHeader("Authorization", "Bearer t");
		assertThat(endpoint.record("k", null, null, "Bearer t")).containsEntry("scope", resolver.resolve(bearer));
		MockHttpServletRequest alice = new MockHttpServletRequest("POST", "/payments");
		alice.setUserPrincipal(() -> "alice");
		alice.addHeader("Authorization", "Basic YWxpY2U6c2VjcmV0");
		assertThat(endpoint.record("k", null, "alice", null)).containsEntry("scope", resolver.resolve(alice));
		assertThat(endpoint.record("k", null, null, null)).containsEntry("scope",
				resolver.resolve(new MockHttpServletRequest("POST", "/payments")));
		assertThat(endpoint.record("k", "principal:alice")).containsEntry("scope", "principal:alice")
			.containsEntry("state", "absent");
	}

	@Test
	void theAutoConfiguredEndpointKnowsWhenTheApplicationReplacedTheResolver() {
		WebApplicationContextRunner runner = new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
					IdempotencyEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=idempo");
		runner.run((context) -> assertThat(context.getBean(IdempotencyEndpoint.class).record("k", null, "alice", null))
			.containsEntry("scope", "principal:alice"));
		runner.withBean(CallerScopeResolver.class, () -> (request) -> "tenant:acme")
			.run((context) -> assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> context.getBean(IdempotencyEndpoint.class).record("k", null, "alice", null)));
	}

	@Test
	void withTheDefaultResolversTheScopesAreThoseWebFluxGivesRequestsToo() {
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store, false);
		DefaultReactiveCallerScopeResolver resolver = new DefaultReactiveCallerScopeResolver();
		MockServerWebExchange bearer = MockServerWebExchange
			.from(MockServerHttpRequest.post("/payments").header("Authorization", "Bearer t"));
		assertThat(endpoint.record("k", null, null, "Bearer t")).containsEntry("scope",
				resolver.resolve(bearer).block());
		assertThat(endpoint.record("k", null, null, null)).containsEntry("scope",
				resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest.post("/payments"))).block());
	}

	@Test
	void theAutoConfiguredEndpointKnowsWhenAWebFluxApplicationReplacedTheResolver() {
		ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class, IdempotencyAutoConfiguration.class,
					IdempotencyEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=idempo");
		runner.run((context) -> {
			assertThat(context).hasSingleBean(DefaultReactiveCallerScopeResolver.class);
			assertThat(context.getBean(IdempotencyEndpoint.class).record("k", null, "alice", null))
				.containsEntry("scope", "principal:alice");
		});
		runner.withBean(ReactiveCallerScopeResolver.class, () -> (exchange) -> Mono.just("tenant:acme"))
			.run((context) -> {
				IdempotencyEndpoint endpoint = context.getBean(IdempotencyEndpoint.class);
				assertThatExceptionOfType(InvalidEndpointRequestException.class)
					.isThrownBy(() -> endpoint.record("k", null, "alice", null));
				assertThat(endpoint.record("k", "tenant:acme", null, null)).containsEntry("scope", "tenant:acme");
			});
	}

	@Test
	void theAutoConfiguredEndpointAnswersInANonWebApplicationWithoutTheServletApi() {
		new ApplicationContextRunner()
			.withClassLoader(new FilteredClassLoader("jakarta.servlet", "org.springframework.web.servlet"))
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
					IdempotencyEndpointAutoConfiguration.class))
			.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=idempo")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(IdempotencyEndpoint.class);
				IdempotencyEndpoint endpoint = context.getBean(IdempotencyEndpoint.class);
				assertThat(endpoint.record("k", "template:refunds")).containsEntry("state", "absent")
					.containsEntry("scope", "template:refunds");
				assertThat(endpoint.record("k", null, "alice", null)).containsEntry("scope", "principal:alice");
			});
	}

}
