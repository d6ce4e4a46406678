package dev.idempo.actuate;

import java.time.Clock;

import org.junit.jupiter.api.Test;

import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.IdempotencyEndpointAutoConfiguration;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.web.CallerScopeResolver;
import dev.idempo.web.DefaultCallerScopeResolver;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Which caller scope the endpoint looks up: with the default resolver, the scope that
 * resolver gives a request by the named principal or with the given {@code Authorization}
 * value; with another resolver, only the scope it is given, since it cannot derive that
 * resolver's scopes.
 */
class IdempotencyEndpointTests {

	private final InMemoryLockingStore store = new InMemoryLockingStore(Clock.systemUTC(), 100, 1 << 20);

	@Test
	void withACustomResolverOnlyTheScopeSelectsACaller() {
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store, (request) -> "tenant:acme", false);
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
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store, resolver, false);
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

}
