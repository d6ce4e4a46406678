package dev.idempo.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreContractTest;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The {@link LockingStore} contract and the Redis store's own promises, against a real
 * Redis that a subclass provides (standalone or Cluster). Every store instance writes
 * under a random key prefix, so tests never meet keys of other tests or other builds.
 *
 * @author idempo
 */
abstract class AbstractRedisLockingStoreTests extends LockingStoreContractTest {

	private final String keyPrefix = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	/**
	 * The connection factory of the server under test, started.
	 * @return the connection factory
	 */
	protected abstract RedisConnectionFactory connectionFactory();

	@Override
	protected LockingStore createStore() {
		return new RedisLockingStore(connectionFactory(), this.keyPrefix);
	}

	/**
	 * Deletes the lock key, as Redis does when a lease runs out.
	 */
	@Override
	protected void breakLease(Lease lease) {
		try (RedisConnection connection = connectionFactory().getConnection()) {
			assertThat(connection.keyCommands().del(bytes(redisStore().lockKey(lease.key())))).isOne();
		}
	}

	@Override
	protected Duration shortTtl() {
		return Duration.ofMillis(500);
	}

	protected String keyPrefix() {
		return this.keyPrefix;
	}

	protected RedisLockingStore redisStore() {
		return (RedisLockingStore) store();
	}

	protected static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void keysCarryThePrefixAndAHashTagThatPutsThemInOneSlot() {
		String key = newKey();
		String lockKey = redisStore().lockKey(key);
		String recordKey = redisStore().recordKey(key);
		assertThat(lockKey).isEqualTo(this.keyPrefix + "{" + key + "}:lock");
		assertThat(recordKey).isEqualTo(this.keyPrefix + "{" + key + "}:record");
		assertThat(SlotHash.getSlot(lockKey)).isEqualTo(SlotHash.getSlot(recordKey)).isEqualTo(SlotHash.getSlot(key));
	}

	@Test
	void aClaimThatFindsARecordReportsWhatRemainsOfItsTtl() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(store().complete(lease, record("stored"), TTL)).isTrue();
		ClaimResult.Completed completed = (ClaimResult.Completed) store().claim(key, LOCK_TTL);
		assertThat(completed.remainingTtl()).isNotNull().isGreaterThan(TTL.minusMinutes(1)).isLessThanOrEqualTo(TTL);
	}

	@Test
	void claimWritesTheOwnerTokenWithTheLockTtl() {
		String key = newKey();
		Lease lease = acquire(key);
		try (RedisConnection connection = connectionFactory().getConnection()) {
			byte[] lockKey = bytes(redisStore().lockKey(key));
			assertThat(connection.stringCommands().get(lockKey)).isEqualTo(bytes(lease.token()));
			assertThat(connection.keyCommands().pTtl(lockKey)).isPositive().isLessThanOrEqualTo(LOCK_TTL.toMillis());
			assertThat(connection.keyCommands().exists(bytes(redisStore().recordKey(key)))).isFalse();
		}
	}

	@Test
	void completeWritesTheRecordWithItsTtlAndDeletesTheLock() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(store().complete(lease, record("stored"), TTL)).isTrue();
		try (RedisConnection connection = connectionFactory().getConnection()) {
			byte[] recordKey = bytes(redisStore().recordKey(key));
			assertThat(connection.hashCommands().hGet(recordKey, bytes("fingerprint"))).isEqualTo(bytes("fp-stored"));
			assertThat(connection.hashCommands().hGet(recordKey, bytes("response"))).isEqualTo(bytes("stored"));
			assertThat(connection.keyCommands().pTtl(recordKey)).isGreaterThan(TTL.minusMinutes(1).toMillis())
				.isLessThanOrEqualTo(TTL.toMillis());
			assertThat(connection.keyCommands().exists(bytes(redisStore().lockKey(key)))).isFalse();
		}
	}

	/**
	 * Lettuce resends the commands that were in flight when its connection dropped: a
	 * complete that stored its record and lost its reply runs again. The script then
	 * finds its own record and says it stored (not that the lease was lost); any other
	 * complete with the same token is refused as before.
	 */
	@Test
	void completeSentAgainFindsItsOwnRecord() throws Exception {
		String key = newKey();
		Lease lease = acquire(key);
		byte[] script = new ClassPathResource("dev/idempo/store/redis/complete.lua").getContentAsByteArray();
		try (RedisConnection connection = connectionFactory().getConnection()) {
			byte[][] keysAndArgs = { bytes(redisStore().lockKey(key)), bytes(redisStore().recordKey(key)),
					bytes(lease.token()), bytes("fp-stored"), bytes("stored"), bytes(Long.toString(TTL.toMillis())),
					bytes("call-1") };
			assertThat((Long) connection.scriptingCommands().eval(script, ReturnType.INTEGER, 2, keysAndArgs))
				.as("stored")
				.isEqualTo(1L);
			assertThat((Long) connection.scriptingCommands().eval(script, ReturnType.INTEGER, 2, keysAndArgs))
				.as("the same call again")
				.isEqualTo(1L);
			keysAndArgs[6] = bytes("call-2");
			keysAndArgs[4] = bytes("other");
			assertThat((Long) connection.scriptingCommands().eval(script, ReturnType.INTEGER, 2, keysAndArgs))
				.as("another call with the same token")
				.isEqualTo(0L);
		}
		assertThat(((ClaimResult.Completed) store().claim(key, LOCK_TTL)).record()).isEqualTo(record("stored"));
	}

	@Test
	void renewSetsTheLeaseOnTheServer() {
		String key = newKey();
		Lease lease = ((ClaimResult.Acquired) store().claim(key, Duration.ofSeconds(5))).lease();
		assertThat(store().renew(lease, Duration.ofMinutes(10))).isTrue();
		try (RedisConnection connection = connectionFactory().getConnection()) {
			assertThat(connection.keyCommands().pTtl(bytes(redisStore().lockKey(key))))
				.isGreaterThan(Duration.ofMinutes(9).toMillis());
		}
	}

	@Test
	void leaseThatNobodyRenewsIsFreedByRedisAfterTheLockTtl() {
		// what happens to the claims of an instance that dies mid-request
		String key = newKey();
		Lease dead = ((ClaimResult.Acquired) store().claim(key, Duration.ofMillis(300))).lease();
		assertThat(store().claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		Lease next = awaitAcquired(key);
		assertThat(next.token()).isNotEqualTo(dead.token());
		assertThat(store().renew(dead, LOCK_TTL)).isFalse();
		assertThat(store().complete(dead, record("dead"), TTL)).isFalse();
		assertThat(store().complete(next, record("next"), TTL)).isTrue();
	}

	@Test
	void emptyResponseAndFingerprintRoundTrip() {
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(store().complete(lease, new StoredRecord("", new byte[0]), TTL)).isTrue();
		ClaimResult claim = store().claim(key, LOCK_TTL);
		assertThat(claim).isInstanceOf(ClaimResult.Completed.class);
		assertThat(((ClaimResult.Completed) claim).record()).isEqualTo(new StoredRecord("", new byte[0]));
	}

	@Test
	void storesWithOtherPrefixesDoNotShareKeys() {
		RedisLockingStore other = new RedisLockingStore(connectionFactory(), this.keyPrefix + "other:");
		String key = newKey();
		Lease lease = acquire(key);
		assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store().complete(lease, record("mine"), TTL)).isTrue();
		assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
	}

	@Test
	void keysThatAreNotDigestsNeverReachRedis() {
		for (String key : new String[] { "", "ABCDEF", "abc}x{", "abc:def", "0".repeat(129), "é" }) {
			assertThatIllegalArgumentException().as(key).isThrownBy(() -> store().claim(key, LOCK_TTL));
			assertThatIllegalArgumentException().as(key)
				.isThrownBy(() -> store().release(new Lease(key, UUID.randomUUID().toString())));
		}
	}

	@Test
	void prefixWithABraceIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RedisLockingStore(connectionFactory(), "app{1}:"))
			.withMessageContaining("hash tag");
	}

	@Test
	void recordKeyOfAnotherTypeIsALockingStoreException() {
		String key = newKey();
		try (RedisConnection connection = connectionFactory().getConnection()) {
			connection.stringCommands().set(bytes(redisStore().recordKey(key)), bytes("not a hash"));
		}
		assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> store().claim(key, LOCK_TTL))
			.withMessageContaining("claim");
	}

	@Test
	void leaseExpiresAndIsNamedRedis() {
		assertThat(store().leaseExpires()).isTrue();
		assertThat(store().name()).isEqualTo("redis");
	}

}
