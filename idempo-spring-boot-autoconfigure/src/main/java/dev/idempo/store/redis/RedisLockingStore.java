package dev.idempo.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;

import org.springframework.core.io.ClassPathResource;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.PoolException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.script.DefaultScriptExecutor;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.script.ScriptExecutor;
import org.springframework.data.redis.serializer.RedisSerializer;
import org.springframework.util.Assert;
import org.springframework.util.StreamUtils;

/**
 * A {@link LockingStore} in Redis (standalone, Sentinel or Cluster), through Spring Data
 * Redis.
 * <p>
 * Each storage key owns two Redis keys that share a hash tag, and so one Cluster slot:
 * <ul>
 * <li>{@code <prefix>{<storage key>}:lock}, a string holding the owner token of the
 * current claim, with a time to live of the lock TTL;</li>
 * <li>{@code <prefix>{<storage key>}:record}, a hash with the fields {@code fingerprint}
 * and {@code response} (the encoded response, stored as raw bytes), with a time to live
 * of the record TTL.</li>
 * </ul>
 * Every operation is one Lua script, shipped with this class and sent with
 * {@code EVALSHA} (falling back to {@code EVAL} when the server does not know it yet):
 * claim-or-fetch, complete-and-release, release and renew. The last three act only while
 * the lock still holds the lease's owner token, so a request that lost its claim never
 * overwrites or deletes another request's record or lock.
 * <p>
 * A claim is a lease: Redis deletes the lock key when the lock TTL runs out, and the
 * request flow {@linkplain #renew renews} it while the handler runs. When an application
 * instance dies mid-request, nobody renews its leases, so its keys are free again at the
 * latest one lock TTL later; meanwhile duplicates get {@code 409}. Expiry is computed by
 * the Redis server, never by the application's clock.
 * <p>
 * Keys handed to this store must be lowercase hex digests: they become part of Redis
 * keys, and a brace would break the hash tag.
 *
 * @author idempo
 */
public final class RedisLockingStore implements LockingStore {

	/** The key prefix used unless configured otherwise. */
	public static final String DEFAULT_KEY_PREFIX = "idempo:";

	private static final Pattern DIGEST = Pattern.compile("[0-9a-f]{1,128}");

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> CLAIM_SCRIPT = loadScript("claim.lua", List.class);

	private static final RedisScript<Long> COMPLETE_SCRIPT = loadScript("complete.lua", Long.class);

	private static final RedisScript<Long> RELEASE_SCRIPT = loadScript("release.lua", Long.class);

	private static final RedisScript<Long> RENEW_SCRIPT = loadScript("renew.lua", Long.class);

	private static final byte[] ACQUIRED = bytes("acquired");

	private static final byte[] IN_PROGRESS = bytes("in-progress");

	private static final byte[] COMPLETED = bytes("completed");

	private static final RedisSerializer<byte[]> RAW = RedisSerializer.byteArray();

	private final ScriptExecutor<byte[]> scripts;

	private final String keyPrefix;

	/**
	 * Creates a store with the {@linkplain #DEFAULT_KEY_PREFIX default key prefix}.
	 * @param connectionFactory the connection factory to use
	 */
	public RedisLockingStore(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, DEFAULT_KEY_PREFIX);
	}

	/**
	 * Creates a store.
	 * @param connectionFactory the connection factory to use
	 * @param keyPrefix prepended to every key; must not contain braces, which would
	 * replace the hash tag
	 */
	public RedisLockingStore(RedisConnectionFactory connectionFactory, String keyPrefix) {
		Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
		Assert.notNull(keyPrefix, "'keyPrefix' must not be null");
		Assert.isTrue(keyPrefix.indexOf('{') < 0 && keyPrefix.indexOf('}') < 0,
				() -> "'keyPrefix' must not contain '{' or '}' (it would replace the hash tag), but was '" + keyPrefix
						+ "'");
		// raw bytes both ways: the scripts' keys, arguments and replies pass unchanged,
		// so
		// responses round-trip byte for byte
		RedisTemplate<byte[], byte[]> template = new RedisTemplate<>();
		template.setConnectionFactory(connectionFactory);
		template.setEnableDefaultSerializer(false);
		template.setKeySerializer(RAW);
		template.setValueSerializer(RAW);
		template.afterPropertiesSet();
		this.scripts = new DefaultScriptExecutor<>(template);
		this.keyPrefix = keyPrefix;
	}

	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		Keys keys = keys(key);
		byte[] leaseMillis = milliseconds(lockTtl, "lockTtl");
		String token = UUID.randomUUID().toString();
		List<?> reply = execute("claim",
				() -> this.scripts.execute(CLAIM_SCRIPT, keys.both(), bytes(token), leaseMillis));
		if (reply != null && !reply.isEmpty() && reply.get(0) instanceof byte[] outcome) {
			if (reply.size() == 1 && Arrays.equals(outcome, ACQUIRED)) {
				return new ClaimResult.Acquired(new Lease(key, token));
			}
			if (reply.size() == 1 && Arrays.equals(outcome, IN_PROGRESS)) {
				return ClaimResult.InProgress.instance();
			}
			if (reply.size() == 3 && Arrays.equals(outcome, COMPLETED) && reply.get(1) instanceof byte[] fingerprint
					&& reply.get(2) instanceof byte[] response) {
				return new ClaimResult.Completed(
						new StoredRecord(new String(fingerprint, StandardCharsets.UTF_8), response));
			}
		}
		throw new LockingStoreException("Redis answered the claim of key " + key + " with an unexpected reply of "
				+ ((reply != null) ? reply.size() + " elements" : "null") + " (is the record key " + keys.record()
				+ " written by something else?)");
	}

	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		Keys keys = keys(lease.key());
		byte[] recordMillis = milliseconds(ttl, "ttl");
		Long stored = execute("complete", () -> this.scripts.execute(COMPLETE_SCRIPT, keys.both(), bytes(lease.token()),
				bytes(record.fingerprint()), record.response(), recordMillis));
		return isOne(stored, "complete");
	}

	@Override
	public boolean release(Lease lease) {
		Keys keys = keys(lease.key());
		Long released = execute("release",
				() -> this.scripts.execute(RELEASE_SCRIPT, keys.lockOnly(), bytes(lease.token())));
		return isOne(released, "release");
	}

	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		Keys keys = keys(lease.key());
		byte[] leaseMillis = milliseconds(lockTtl, "lockTtl");
		Long renewed = execute("renew",
				() -> this.scripts.execute(RENEW_SCRIPT, keys.lockOnly(), bytes(lease.token()), leaseMillis));
		return isOne(renewed, "renew");
	}

	/**
	 * Returns {@code true}: claims are leases that Redis expires after the lock TTL
	 * unless renewed.
	 */
	@Override
	public boolean leaseExpires() {
		return true;
	}

	@Override
	public String name() {
		return "redis";
	}

	/**
	 * The Redis key that holds the owner token of the claim on {@code key}.
	 * @param key the storage key
	 * @return the lock key, {@code <prefix>{<key>}:lock}
	 */
	public String lockKey(String key) {
		return keys(key).lock();
	}

	/**
	 * The Redis key that holds the completed record of {@code key}.
	 * @param key the storage key
	 * @return the record key, {@code <prefix>{<key>}:record}
	 */
	public String recordKey(String key) {
		return keys(key).record();
	}

	private Keys keys(String key) {
		Assert.isTrue(DIGEST.matcher(key).matches(),
				"Storage key must be a lowercase hex digest of at most 128 characters");
		String hashTagged = this.keyPrefix + "{" + key + "}";
		return new Keys(hashTagged + ":lock", hashTagged + ":record");
	}

	private static <T> @Nullable T execute(String operation, Supplier<@Nullable T> script) {
		try {
			return script.get();
		}
		catch (DataAccessException | PoolException ex) {
			throw new LockingStoreException("Redis " + operation + " failed: " + ex.getMessage(), ex);
		}
	}

	private static boolean isOne(@Nullable Long reply, String operation) {
		if (reply == null || (reply != 0 && reply != 1)) {
			throw new LockingStoreException("Redis answered " + operation + " with " + reply + ", expected 0 or 1");
		}
		return reply == 1;
	}

	private static byte[] milliseconds(Duration duration, String name) {
		Assert.isTrue(!duration.isNegative() && !duration.isZero(), () -> "'" + name + "' must be positive");
		// PX and PEXPIRE take whole milliseconds; never round a positive duration to zero
		return bytes(Long.toString(Math.max(1, duration.toMillis())));
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static <T> RedisScript<T> loadScript(String name, Class<T> resultType) {
		// beside this class: dev/idempo/store/redis/<name>
		ClassPathResource resource = new ClassPathResource(name, RedisLockingStore.class);
		try (InputStream in = resource.getInputStream()) {
			return RedisScript.of(StreamUtils.copyToString(in, StandardCharsets.UTF_8), resultType);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not read the Redis script " + resource, ex);
		}
	}

	private record Keys(String lock, String record) {

		List<byte[]> both() {
			return List.of(bytes(this.lock), bytes(this.record));
		}

		List<byte[]> lockOnly() {
			return List.of(bytes(this.lock));
		}

	}

}
