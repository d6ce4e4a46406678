package dev.idempo.webflux;

import java.util.UUID;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.store.redis.ReactiveRedisLockingStore;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestRedis;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * The WebFlux HTTP contract on the Redis store, whose leases the flow renews, against the
 * server {@link TestRedis} resolves.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=redis")
class RedisWebFluxHttpTests extends WebFluxHttpContractTests {

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

	@Override
	Class<?> reactiveStoreType() {
		return ReactiveRedisLockingStore.class;
	}

	@Override
	Class<?> storeType() {
		return RedisLockingStore.class;
	}

}
