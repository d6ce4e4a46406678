package dev.idempo.web;

import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.LockingStore;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestRedis;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Streamed request bodies on the Redis store, against the server {@link TestRedis}
 * resolves.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=redis")
class RedisStreamedBodyHttpTests extends StreamedBodyHttpContract {

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

	@Test
	void runsOnTheRedisStore(@Autowired LockingStore store) {
		assertThat(store).isInstanceOf(RedisLockingStore.class);
	}

}
