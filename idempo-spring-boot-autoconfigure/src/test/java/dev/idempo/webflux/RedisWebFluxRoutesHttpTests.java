package dev.idempo.webflux;

import java.util.UUID;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.TestRedis;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * {@code idempo.routes} in a WebFlux application on the Redis store (the reactive store),
 * against the server {@link TestRedis} resolves.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=redis")
class RedisWebFluxRoutesHttpTests extends WebFluxRoutesHttpContractTests {

	private static final String KEY_PREFIX = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> TestRedis.server().url());
		registry.add("idempo.store.redis.key-prefix", () -> KEY_PREFIX);
	}

	@AfterAll
	static void deleteKeys() {
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

}
