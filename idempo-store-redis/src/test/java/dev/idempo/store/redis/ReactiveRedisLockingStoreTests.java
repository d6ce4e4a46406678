package dev.idempo.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.RedisURI;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.ReactiveLockingStoreContractTest;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestRedis;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.fail;

/**
 * The reactive store contract for {@link ReactiveRedisLockingStore} against a standalone
 * server, as {@link TestRedis} resolves it, beside a {@link RedisLockingStore} with the
 * same key prefix: the two share their records.
 *
 * @author idempo
 */
class ReactiveRedisLockingStoreTests extends ReactiveLockingStoreContractTest {

	private static @Nullable LettuceConnectionFactory connectionFactory;

	private final String keyPrefix = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	private static synchronized LettuceConnectionFactory connectionFactory() {
		if (connectionFactory == null) {
			connectionFactory = TestRedis.server().createConnectionFactory();
		}
		return connectionFactory;
	}

	@AfterAll
	static synchronized void destroyConnectionFactory() {
		if (connectionFactory != null) {
			connectionFactory.destroy();
			connectionFactory = null;
		}
	}

	@Override
	protected LockingStore createBlockingStore() {
		return new RedisLockingStore(connectionFactory(), this.keyPrefix);
	}

	@Override
	protected ReactiveLockingStore createReactiveStore(LockingStore blockingStore) {
		return new ReactiveRedisLockingStore(connectionFactory(), this.keyPrefix);
	}

	@Override
	protected void destroyBlockingStore(LockingStore store) {
		((ReactiveRedisLockingStore) reactiveStore()).close();
		try (RedisConnection connection = connectionFactory().getConnection()) {
			TestRedis.Server.deleteKeys(connection, this.keyPrefix);
		}
	}

	/**
	 * Deletes the lock key, as Redis does when a lease runs out.
	 */
	@Override
	protected void breakLease(Lease lease) {
		try (RedisConnection connection = connectionFactory().getConnection()) {
			byte[] lockKey = bytes(((RedisLockingStore) blockingStore()).lockKey(lease.key()));
			assertThat(connection.keyCommands().del(lockKey)).isOne();
		}
	}

	@Override
	protected Duration shortTtl() {
		return Duration.ofMillis(500);
	}

	/**
	 * A store over a proxy in front of the server, connected, whose replies the proxy
	 * then holds back.
	 */
	@Override
	protected HeldAnswers holdAnswers() {
		RedisURI uri = RedisURI.create(TestRedis.server().url());
		TcpProxy proxy = TcpProxy.start(0, uri.getHost(), uri.getPort());
		uri.setHost("127.0.0.1");
		uri.setPort(proxy.port());
		LettuceConnectionFactory proxied = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(uri),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(30)).build());
		proxied.afterPropertiesSet();
		proxied.start();
		ReactiveRedisLockingStore store = new ReactiveRedisLockingStore(proxied, this.keyPrefix);
		assertThat(await(store.release(new Lease(newKey(), "connects")))).isFalse();
		proxy.holdReplies();
		return new HeldAnswers() {

			@Override
			public ReactiveLockingStore store() {
				return store;
			}

			@Override
			public void letThrough() {
				proxy.forward();
			}

			@Override
			public void close() {
				proxy.forward();
				store.close();
				proxied.destroy();
				proxy.close();
			}

		};
	}

	@Test
	void recordsAreSharedWithABlockingStoreOfTheSamePrefix() {
		LockingStore blocking = blockingStore();
		String key = newKey();
		Lease reactive = acquire(key);
		assertThat(blocking.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store().complete(reactive, record("reactive"), TTL)).isTrue();
		assertThat(((ClaimResult.Completed) blocking.claim(key, LOCK_TTL)).record()).isEqualTo(record("reactive"));
		String other = newKey();
		Lease lease = ((ClaimResult.Acquired) blocking.claim(other, LOCK_TTL)).lease();
		assertThat(store().claim(other, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(blocking.complete(lease, record("blocking"), TTL)).isTrue();
		ClaimResult.Completed completed = (ClaimResult.Completed) store().claim(other, LOCK_TTL);
		assertThat(completed.record()).isEqualTo(record("blocking"));
		assertThat(completed.remainingTtl()).isNotNull().isGreaterThan(TTL.minusMinutes(1)).isLessThanOrEqualTo(TTL);
	}

	@Test
	void claimWritesTheOwnerTokenWithTheLockTtlUnderThePrefix() {
		String key = newKey();
		Lease lease = acquire(key);
		try (RedisConnection connection = connectionFactory().getConnection()) {
			byte[] lockKey = bytes(this.keyPrefix + "{" + key + "}:lock");
			assertThat(connection.stringCommands().get(lockKey)).isEqualTo(bytes(lease.token()));
			assertThat(connection.keyCommands().pTtl(lockKey)).isPositive().isLessThanOrEqualTo(LOCK_TTL.toMillis());
		}
	}

	@Test
	void keysThatAreNotDigestsNeverReachRedis() {
		for (String key : new String[] { "", "ABCDEF", "abc}x{", "0".repeat(129) }) {
			assertThatIllegalArgumentException().as(key).isThrownBy(() -> store().claim(key, LOCK_TTL));
			assertThatIllegalArgumentException().as(key)
				.isThrownBy(() -> store().release(new Lease(key, UUID.randomUUID().toString())));
		}
	}

	@Test
	void recordKeyOfAnotherTypeIsALockingStoreException() {
		String key = newKey();
		try (RedisConnection connection = connectionFactory().getConnection()) {
			connection.stringCommands().set(bytes(this.keyPrefix + "{" + key + "}:record"), bytes("not a hash"));
		}
		assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> store().claim(key, LOCK_TTL))
			.withMessageContaining("claim");
		assertThat(store().claim(newKey(), LOCK_TTL)).as("the connection is still good")
			.isInstanceOf(ClaimResult.Acquired.class);
	}

	/**
	 * Nothing is asked of Redis before the first operation, so the store is made while
	 * Redis is down; operations then fail as store failures.
	 */
	@Test
	void unreachableRedisIsALockingStoreException() {
		LettuceConnectionFactory unreachable = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", TestRedis.freePort()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		unreachable.afterPropertiesSet();
		unreachable.start();
		try (ReactiveRedisLockingStore store = new ReactiveRedisLockingStore(unreachable, this.keyPrefix)) {
			Lease lease = new Lease(newKey(), UUID.randomUUID().toString());
			assertThatExceptionOfType(LockingStoreException.class)
				.isThrownBy(() -> await(store.claim(newKey(), LOCK_TTL)))
				.withMessageContaining("claim");
			assertThatExceptionOfType(LockingStoreException.class)
				.isThrownBy(() -> await(store.complete(lease, record("x"), TTL)));
			assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> await(store.release(lease)));
		}
		finally {
			unreachable.destroy();
		}
	}

	/**
	 * A claim that timed out after Redis ran it gives its token's key back, so nothing
	 * stays locked for the long lock TTL asked.
	 */
	@Test
	void aClaimThatTimedOutAfterRedisRanItGivesTheKeyBack() throws Exception {
		RedisURI uri = RedisURI.create(TestRedis.server().url());
		try (TcpProxy proxy = TcpProxy.start(0, uri.getHost(), uri.getPort())) {
			uri.setHost("127.0.0.1");
			uri.setPort(proxy.port());
			LettuceConnectionFactory proxied = new LettuceConnectionFactory(
					LettuceConnectionFactory.createRedisConfiguration(uri),
					LettuceClientConfiguration.builder().commandTimeout(Duration.ofMillis(500)).build());
			proxied.afterPropertiesSet();
			proxied.start();
			try (ReactiveRedisLockingStore store = new ReactiveRedisLockingStore(proxied, this.keyPrefix)) {
				assertThat(await(store.release(new Lease(newKey(), "connects")))).isFalse();
				proxy.holdReplies();
				String key = newKey();
				assertThatExceptionOfType(LockingStoreException.class)
					.isThrownBy(() -> await(store.claim(key, Duration.ofMinutes(10))));
				assertThat(store().release(awaitAcquired(key))).isTrue();
				proxy.forward();
			}
			finally {
				proxied.destroy();
			}
		}
	}

	/**
	 * Claims cancelled around the moment their answer arrives, many times over, never
	 * leave their keys locked.
	 */
	@Test
	void claimsCancelledAsTheirAnswerArrivesNeverLeaveTheirKeysLocked() {
		long start = System.nanoTime();
		await(reactiveStore().claim(newKey(), LOCK_TTL));
		long roundTrip = Math.max(System.nanoTime() - start, TimeUnit.MICROSECONDS.toNanos(50));
		for (int round = 0; round < 300; round++) {
			String key = newKey();
			AtomicReference<@Nullable ClaimResult> answer = new AtomicReference<>();
			Disposable claim = reactiveStore().claim(key, LOCK_TTL)
				.doOnNext(answer::set)
				.subscribeOn(Schedulers.parallel())
				.subscribe();
			long end = System.nanoTime() + ThreadLocalRandom.current().nextLong(2 * roundTrip);
			while (System.nanoTime() < end) {
				Thread.onSpinWait();
			}
			claim.dispose();
			assertThat(store().release(awaitFreed(key, answer))).as("round %d", round).isTrue();
		}
	}

	/**
	 * Acquires {@code key} once it is free, releasing it first for the subscriber if the
	 * claim's answer reached it: an answer already on its way through the subscriber when
	 * the cancellation came is the subscriber's to release, and may land after
	 * {@code dispose()} returned.
	 */
	private Lease awaitFreed(String key, AtomicReference<@Nullable ClaimResult> answer) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		boolean released = false;
		ClaimResult claim;
		do {
			if (!released && answer.get() instanceof ClaimResult.Acquired acquired) {
				assertThat(store().release(acquired.lease())).isTrue();
				released = true;
			}
			claim = store().claim(key, LOCK_TTL);
			if (claim instanceof ClaimResult.Acquired acquired) {
				return acquired.lease();
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
		while (System.nanoTime() < deadline);
		return fail("key was not freed in time; last claim: %s, the subscriber's answer: %s", claim, answer.get());
	}

	@Test
	void prefixWithABraceIsRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ReactiveRedisLockingStore(connectionFactory(), "app{1}:"))
			.withMessageContaining("hash tag");
	}

	@Test
	void leaseExpiresAndIsNamedRedis() {
		assertThat(reactiveStore().leaseExpires()).isTrue();
		assertThat(reactiveStore().name()).isEqualTo("redis");
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
