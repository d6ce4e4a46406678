package dev.idempo.checks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;
import dev.idempo.webflux.DefaultReactiveCallerScopeResolver;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code idempo} Actuator endpoint of a WebFlux application on exactly the class path
 * the starter, {@code spring-boot-starter-webflux} and
 * {@code spring-boot-starter-actuator} give it (the build's enforcer rule has already
 * checked that no servlet or Spring MVC jar is on it), on a Netty server, with BlockHound
 * installed: it reads the record of a key an {@code @Idempotent} handler completed,
 * evicts it so that the next request runs the handler again, and names callers as the
 * reactive request flow scopes them. Before the endpoint needed no servlet class, its
 * first request never got an answer
 * ({@code NoClassDefFoundError: jakarta/servlet/ServletException} on a
 * {@code boundedElastic} worker).
 *
 * @author idempo
 */
@SpringBootTest(classes = WebFluxEndpointTests.WebFluxApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempo.store.type=memory", "management.endpoints.web.exposure.include=idempo" })
class WebFluxEndpointTests {

	@LocalServerPort
	int port;

	@Autowired
	Orders orders;

	private WebTestClient client;

	@BeforeEach
	void client() {
		// an endpoint that never answers fails the test instead of hanging it
		this.client = WebTestClient.bindToServer()
			.baseUrl("http://localhost:" + this.port)
			.responseTimeout(Duration.ofSeconds(10))
			.build();
	}

	@Test
	void readsAndEvictsTheRecordOfAKeyAWebFluxHandlerCompleted() {
		assertThat(ClassUtils.isPresent("jakarta.servlet.ServletException", null)).isFalse();
		String key = UUID.randomUUID().toString();
		String record = "/actuator/idempo?key=" + key;
		this.client.get()
			.uri(record)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("absent");
		int before = this.orders.runs.get();
		order(key, null).expectStatus().isCreated().expectHeader().doesNotExist("Idempotent-Replayed");
		order(key, null).expectStatus().isCreated().expectHeader().valueEquals("Idempotent-Replayed", "true");
		assertThat(this.orders.runs).hasValue(before + 1);
		this.client.get()
			.uri(record)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("completed")
			.jsonPath("$.scope")
			.isEqualTo(DefaultReactiveCallerScopeResolver.ANONYMOUS)
			.jsonPath("$.status")
			.isEqualTo(201)
			.jsonPath("$.store")
			.isEqualTo("memory")
			.jsonPath("$.body")
			.doesNotExist();
		this.client.delete()
			.uri(record)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.evicted")
			.isEqualTo(true);
		this.client.get()
			.uri(record)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("absent");
		order(key, null).expectStatus().isCreated().expectHeader().doesNotExist("Idempotent-Replayed");
		assertThat(this.orders.runs).hasValue(before + 2);
	}

	@Test
	void findsTheRecordOfACallerByTheirAuthorizationValueAsTheReactiveFlowScopesIt() {
		String key = UUID.randomUUID().toString();
		String token = "Bearer " + UUID.randomUUID();
		order(key, token).expectStatus().isCreated();
		this.client.get()
			.uri((uri) -> uri.path("/actuator/idempo")
				.queryParam("key", key)
				.queryParam("authorization", "{token}")
				.build(token))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("completed")
			.jsonPath("$.scope")
			.isEqualTo(DefaultReactiveCallerScopeResolver.authorizationScope(List.of(token)));
		this.client.get()
			.uri("/actuator/idempo?key=" + key)
			.exchange()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("absent");
	}

	private WebTestClient.ResponseSpec order(String key, @Nullable String authorization) {
		return this.client.post().uri("/orders").header("Idempotency-Key", key).headers((headers) -> {
			if (authorization != null) {
				headers.set("Authorization", authorization);
			}
		}).bodyValue(Map.of("item", "book")).exchange();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Orders.class)
	static class WebFluxApplication {

	}

	@RestController
	static class Orders {

		final AtomicInteger runs = new AtomicInteger();

		@PostMapping("/orders")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Mono<Map<String, Object>> create(@RequestBody Mono<Map<String, Object>> order) {
			return order.map((body) -> Map.of("item", body.get("item"), "run", this.runs.incrementAndGet()));
		}

	}

}
