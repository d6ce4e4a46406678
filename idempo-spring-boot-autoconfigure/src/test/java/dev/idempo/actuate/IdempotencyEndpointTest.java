package dev.idempo.actuate;

import java.time.Clock;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.idempo.core.DefaultCallerScopeResolver;
import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Which caller scope the endpoint looks up when the application replaced the default
 * resolver: only the scope it is given, since it cannot derive another resolver's scopes.
 */
class IdempotencyEndpointTest {

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
	void withTheDefaultResolverTheScopesAreItsOwn() {
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store, new DefaultCallerScopeResolver(), false);
		assertThat(endpoint.record("k", null, "alice", null)).containsEntry("scope", "principal:alice");
		assertThat(endpoint.record("k", null, null, null)).containsEntry("scope", "anonymous");
		assertThat(endpoint.record("k", null, null, "Bearer t")).containsEntry("scope",
				DefaultCallerScopeResolver.authorizationScope(List.of("Bearer t")));
	}

}
