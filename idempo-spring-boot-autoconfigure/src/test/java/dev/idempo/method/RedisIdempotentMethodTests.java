package dev.idempo.method;

import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.method.MethodTestApplication.Receipt;
import dev.idempo.store.LockingStore;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestRedis;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The method contract on the Redis store, against the server {@link TestRedis} resolves.
 *
 * @author idempo
 */
// a short lease, renewed while a method runs longer than it
@TestPropertySource(properties = { "idempo.store.type=redis", "idempo.lock-ttl=1s" })
class RedisIdempotentMethodTests extends IdempotentMethodContractTests {

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
	void aMethodRunningLongerThanTheLockTtlKeepsItsKeyByRenewingItsLease() throws Exception {
		String key = newKey();
		this.executions.hold();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Receipt> first = executor.submit(() -> this.payments.slow(key));
			assertThat(this.executions.awaitEntered()).isTrue();
			// time itself is what is tested: well past the 1 s lease, which only renewal
			// keeps alive
			Thread.sleep(2500);
			assertThatExceptionOfType(IdempotencyInProgressException.class).isThrownBy(() -> this.payments.slow(key));
			this.executions.release();
			Receipt stored = first.get(20, TimeUnit.SECONDS);
			assertThat(this.payments.slow(key)).isEqualTo(stored);
			assertThat(this.executions.count("slow", key)).isOne();
		}
		finally {
			this.executions.release();
			executor.shutdownNow();
		}
	}

	@Test
	void aMonoRunningLongerThanTheLockTtlKeepsItsKeyByRenewingItsLease() throws Exception {
		String key = newKey();
		this.executions.hold();
		Disposable first = this.reactive.slow(key).subscribe();
		try {
			assertThat(this.executions.awaitEntered()).isTrue();
			// time itself is what is tested: well past the 1 s lease, which only renewal
			// keeps alive
			Thread.sleep(2500);
			assertThatExceptionOfType(IdempotencyInProgressException.class)
				.isThrownBy(() -> await(this.reactive.slow(key)));
		}
		finally {
			this.executions.release();
		}
		Receipt stored = pollUntilStored(key);
		assertThat(stored.run()).isOne();
		assertThat(this.executions.count("mono-slow", key)).isOne();
		first.dispose();
	}

	private Receipt pollUntilStored(String key) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
		while (true) {
			try {
				return await(this.reactive.slow(key));
			}
			catch (IdempotencyInProgressException ex) {
				if (System.nanoTime() > deadline) {
					throw ex;
				}
				Thread.sleep(20);
			}
		}
	}

	@Test
	void runsOnTheRedisStore(@Autowired LockingStore store) {
		assertThat(store).isInstanceOf(RedisLockingStore.class);
	}

}
