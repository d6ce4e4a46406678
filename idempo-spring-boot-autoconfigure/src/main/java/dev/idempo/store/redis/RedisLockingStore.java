package dev.idempo.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.RecordState;
import dev.idempo.store.OwnerTokens;
import dev.idempo.store.StoredRecord;

import org.springframework.core.io.ClassPathResource;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.PoolException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.ReturnType;
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
 * claim-or-fetch, complete-and-release, release and renew. Scripts run directly on a
 * connection of the factory, with their SHA1 digests computed once: no template, proxy or
 * serializer sits between a request and its one round trip. The last three act only while
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

	private static final Script CLAIM_SCRIPT = Script.load("claim.lua", ReturnType.MULTI);

	private static final Script COMPLETE_SCRIPT = Script.load("complete.lua", ReturnType.INTEGER);

	private static final Script RELEASE_SCRIPT = Script.load("release.lua", ReturnType.INTEGER);

	private static final Script RENEW_SCRIPT = Script.load("renew.lua", ReturnType.INTEGER);

	private static final byte[] ACQUIRED = bytes("acquired");

	private static final byte[] IN_PROGRESS = bytes("in-progress");

	private static final byte[] COMPLETED = bytes("completed");

	private final RedisConnectionFactory connectionFactory;

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
		this.connectionFactory = connectionFactory;
		this.keyPrefix = keyPrefix;
	}

	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		Keys keys = keys(key);
		byte[] leaseMillis = milliseconds(lockTtl, "lockTtl");
		String token = OwnerTokens.next();
		List<?> reply = (List<?>) execute("claim", CLAIM_SCRIPT, 2, keys.lock(), keys.record(), bytes(token),
				leaseMillis);
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
		Object stored = execute("complete", COMPLETE_SCRIPT, 2, keys.lock(), keys.record(), bytes(lease.token()),
				bytes(record.fingerprint()), record.response(), recordMillis);
		return isOne(stored, "complete");
	}

	@Override
	public boolean release(Lease lease) {
		Keys keys = keys(lease.key());
		Object released = execute("release", RELEASE_SCRIPT, 1, keys.lock(), bytes(lease.token()));
		return isOne(released, "release");
	}

	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		Keys keys = keys(lease.key());
		byte[] leaseMillis = milliseconds(lockTtl, "lockTtl");
		Object renewed = execute("renew", RENEW_SCRIPT, 1, keys.lock(), bytes(lease.token()), leaseMillis);
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
		return new String(keys(key).lock(), StandardCharsets.UTF_8);
	}

	/**
	 * The Redis key that holds the completed record of {@code key}.
	 * @param key the storage key
	 * @return the record key, {@code <prefix>{<key>}:record}
	 */
	public String recordKey(String key) {
		return new String(keys(key).record(), StandardCharsets.UTF_8);
	}

	/**
	 * Whether {@code key} is 1 to 128 lowercase hex digits; a loop, not a regular
	 * expression, which showed in profiles of every operation.
	 */
	private static boolean isDigest(String key) {
		int length = key.length();
		if (length == 0 || length > 128) {
			return false;
		}
		for (int i = 0; i < length; i++) {
			char c = key.charAt(i);
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
				return false;
			}
		}
		return true;
	}

	private Keys keys(String key) {
		Assert.isTrue(isDigest(key), "Storage key must be a lowercase hex digest of at most 128 characters");
		String hashTagged = this.keyPrefix + "{" + key + "}";
		return new Keys(bytes(hashTagged + ":lock"), bytes(hashTagged + ":record"));
	}

	@Override
	public RecordState inspect(String key) {
		Keys keys = keys(key);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			boolean inFlight = Boolean.TRUE.equals(connection.keyCommands().exists(keys.lock()));
			List<byte[]> fields = connection.hashCommands()
				.hMGet(keys.record(), bytes("fingerprint"), bytes("response"));
			Long ttl = connection.keyCommands().pTtl(keys.record());
			StoredRecord record = null;
			Instant expiresAt = null;
			if (fields != null && fields.size() == 2 && fields.get(0) != null && fields.get(1) != null) {
				record = new StoredRecord(new String(fields.get(0), StandardCharsets.UTF_8), fields.get(1));
				expiresAt = (ttl != null && ttl > 0) ? Instant.now().plusMillis(ttl) : null;
			}
			return new RecordState(inFlight, record, expiresAt);
		}
		catch (DataAccessException | PoolException ex) {
			throw new LockingStoreException("Redis inspect failed: " + ex.getMessage(), ex);
		}
	}

	@Override
	public boolean evict(String key) {
		Keys keys = keys(key);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Long deleted = connection.keyCommands().del(keys.record());
			return deleted != null && deleted > 0;
		}
		catch (DataAccessException | PoolException ex) {
			throw new LockingStoreException("Redis evict failed: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Sends a {@code PING} the way the store's scripts go, for health checks.
	 * @throws LockingStoreException if Redis does not answer
	 */
	public void ping() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			String reply = connection.ping();
			if (!"PONG".equalsIgnoreCase(reply)) {
				throw new LockingStoreException("Redis answered PING with " + reply);
			}
		}
		catch (DataAccessException | PoolException ex) {
			throw new LockingStoreException("Redis ping failed: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Runs {@code script} in one round trip: {@code EVALSHA}, or {@code EVAL} if the
	 * server does not know the script yet (a new or flushed server, or a failover to a
	 * replica that never saw it).
	 */
	private @Nullable Object execute(String operation, Script script, int numKeys, byte[]... keysAndArgs) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			RedisScriptingCommands commands = connection.scriptingCommands();
			try {
				return commands.evalSha(script.sha1(), script.returnType(), numKeys, keysAndArgs);
			}
			catch (DataAccessException ex) {
				if (!isNoScript(ex)) {
					throw ex;
				}
				return commands.eval(script.source(), script.returnType(), numKeys, keysAndArgs);
			}
		}
		catch (DataAccessException | PoolException ex) {
			throw new LockingStoreException("Redis " + operation + " failed: " + ex.getMessage(), ex);
		}
	}

	private static boolean isNoScript(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			if (message != null && message.contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

	private static boolean isOne(@Nullable Object reply, String operation) {
		if (!(reply instanceof Long number) || (number != 0 && number != 1)) {
			throw new LockingStoreException("Redis answered " + operation + " with " + reply + ", expected 0 or 1");
		}
		return number == 1;
	}

	private static byte[] milliseconds(Duration duration, String name) {
		Assert.isTrue(!duration.isNegative() && !duration.isZero(), () -> "'" + name + "' must be positive");
		// PX and PEXPIRE take whole milliseconds; never round a positive duration to zero
		return bytes(Long.toString(Math.max(1, duration.toMillis())));
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private record Keys(byte[] lock, byte[] record) {

	}

	/**
	 * A Lua script shipped beside this class, with its SHA1 digest computed once.
	 *
	 * @param source the script text
	 * @param sha1 its SHA1 digest in lowercase hex, as {@code EVALSHA} wants it
	 * @param returnType how its reply is read
	 */
	private record Script(byte[] source, String sha1, ReturnType returnType) {

		static Script load(String name, ReturnType returnType) {
			// beside this class: dev/idempo/store/redis/<name>
			ClassPathResource resource = new ClassPathResource(name, RedisLockingStore.class);
			try (InputStream in = resource.getInputStream()) {
				byte[] source = StreamUtils.copyToByteArray(in);
				String sha1 = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source));
				return new Script(source, sha1, returnType);
			}
			catch (IOException | NoSuchAlgorithmException ex) {
				throw new IllegalStateException("Could not read the Redis script " + resource, ex);
			}
		}

	}

}
