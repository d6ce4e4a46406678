package dev.idempo.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.util.Assert;
import org.springframework.util.StreamUtils;

/**
 * What the blocking and the reactive Redis stores share, so that both write and read the
 * same records: the Lua scripts, the key layout and how replies are read.
 *
 * @author idempo
 */
final class RedisScripts {

	static final Script CLAIM = Script.load("claim.lua", ReturnType.MULTI);

	static final Script COMPLETE = Script.load("complete.lua", ReturnType.INTEGER);

	static final Script RELEASE = Script.load("release.lua", ReturnType.INTEGER);

	static final Script RENEW = Script.load("renew.lua", ReturnType.INTEGER);

	private static final byte[] ACQUIRED = bytes("acquired");

	private static final byte[] IN_PROGRESS = bytes("in-progress");

	private static final byte[] COMPLETED = bytes("completed");

	private RedisScripts() {
	}

	/**
	 * Checks a key prefix: braces would replace the hash tag.
	 * @param keyPrefix the prefix
	 */
	static void checkKeyPrefix(String keyPrefix) {
		Assert.notNull(keyPrefix, "'keyPrefix' must not be null");
		Assert.isTrue(keyPrefix.indexOf('{') < 0 && keyPrefix.indexOf('}') < 0,
				() -> "'keyPrefix' must not contain '{' or '}' (it would replace the hash tag), but was '" + keyPrefix
						+ "'");
	}

	/**
	 * The two Redis keys of {@code key}: {@code <prefix>{<key>}:lock} and
	 * {@code <prefix>{<key>}:record}, one hash tag, so one Cluster slot.
	 * @param keyPrefix the store's key prefix
	 * @param key the storage key, a lowercase hex digest
	 * @return the keys
	 */
	static Keys keys(String keyPrefix, String key) {
		Assert.isTrue(isDigest(key), "Storage key must be a lowercase hex digest of at most 128 characters");
		String hashTagged = keyPrefix + "{" + key + "}";
		return new Keys(bytes(hashTagged + ":lock"), bytes(hashTagged + ":record"));
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

	/**
	 * The keys and arguments of the claim script.
	 * @param keys the keys of the storage key
	 * @param token the owner token of the claim
	 * @param lockTtl the lease
	 * @return the keys and arguments
	 */
	static byte[][] claimArguments(Keys keys, String token, Duration lockTtl) {
		return new byte[][] { keys.lock(), keys.record(), bytes(token), milliseconds(lockTtl, "lockTtl") };
	}

	/**
	 * The keys and arguments of the complete script, with a random id of this call, so
	 * that the same call resent after a reconnect is told it stored.
	 * @param keyPrefix the store's key prefix
	 * @param lease the lease
	 * @param record the record
	 * @param ttl the record's time to live
	 * @return the keys and arguments
	 */
	static byte[][] completeArguments(String keyPrefix, Lease lease, StoredRecord record, Duration ttl) {
		Keys keys = keys(keyPrefix, lease.key());
		byte[] recordMillis = milliseconds(ttl, "ttl");
		byte[] completion = bytes(Long.toHexString(ThreadLocalRandom.current().nextLong()));
		return new byte[][] { keys.lock(), keys.record(), bytes(lease.token()), bytes(record.fingerprint()),
				record.response(), recordMillis, completion };
	}

	/**
	 * The keys and arguments of the release script.
	 * @param keyPrefix the store's key prefix
	 * @param lease the lease
	 * @return the keys and arguments
	 */
	static byte[][] releaseArguments(String keyPrefix, Lease lease) {
		return new byte[][] { keys(keyPrefix, lease.key()).lock(), bytes(lease.token()) };
	}

	/**
	 * The keys and arguments of the renew script.
	 * @param keyPrefix the store's key prefix
	 * @param lease the lease
	 * @param lockTtl the new lease
	 * @return the keys and arguments
	 */
	static byte[][] renewArguments(String keyPrefix, Lease lease, Duration lockTtl) {
		return new byte[][] { keys(keyPrefix, lease.key()).lock(), bytes(lease.token()),
				milliseconds(lockTtl, "lockTtl") };
	}

	/**
	 * Reads the claim script's reply: {@code {'acquired'}}, {@code {'in-progress'}} or
	 * {@code {'completed', fingerprint, response, PTTL of the record}}.
	 * @param key the storage key
	 * @param keys its Redis keys
	 * @param token the owner token the claim sent
	 * @param reply the reply, bulk strings as {@code byte[]}, integers as {@code Long}
	 * @return the outcome
	 * @throws LockingStoreException if the reply is none of these
	 */
	static ClaimResult claimResult(String key, Keys keys, String token, @Nullable List<?> reply) {
		if (reply != null && !reply.isEmpty() && reply.get(0) instanceof byte[] outcome) {
			if (reply.size() == 1 && Arrays.equals(outcome, ACQUIRED)) {
				return new ClaimResult.Acquired(new Lease(key, token));
			}
			if (reply.size() == 1 && Arrays.equals(outcome, IN_PROGRESS)) {
				return ClaimResult.InProgress.instance();
			}
			if (reply.size() == 4 && Arrays.equals(outcome, COMPLETED) && reply.get(1) instanceof byte[] fingerprint
					&& reply.get(2) instanceof byte[] response) {
				// PTTL answers -1 for a key without expiry, which this store never writes
				Duration remaining = (reply.get(3) instanceof Long millis && millis > 0) ? Duration.ofMillis(millis)
						: null;
				return new ClaimResult.Completed(
						new StoredRecord(new String(fingerprint, StandardCharsets.UTF_8), response), remaining);
			}
		}
		throw new LockingStoreException("Redis answered the claim of key " + key + " with an unexpected reply of "
				+ ((reply != null) ? reply.size() + " elements" : "null") + " (is the record key "
				+ new String(keys.record(), StandardCharsets.UTF_8) + " written by something else?)");
	}

	/**
	 * Reads the reply of the complete, release and renew scripts.
	 * @param reply the reply
	 * @param operation the operation, for the message
	 * @return whether the script acted (1) or found the lease lost (0)
	 * @throws LockingStoreException if the reply is neither
	 */
	static boolean isOne(@Nullable Object reply, String operation) {
		if (!(reply instanceof Long number) || (number != 0 && number != 1)) {
			throw new LockingStoreException("Redis answered " + operation + " with " + reply + ", expected 0 or 1");
		}
		return number == 1;
	}

	/**
	 * Whether {@code failure} is Redis's {@code NOSCRIPT}: the server does not know the
	 * script yet (a new or flushed server, or a failover to a replica that never saw it).
	 * @param failure the failure
	 * @return whether to send the script with {@code EVAL}
	 */
	static boolean isNoScript(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			if (message != null && message.contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

	static byte[] milliseconds(Duration duration, String name) {
		Assert.isTrue(!duration.isNegative() && !duration.isZero(), () -> "'" + name + "' must be positive");
		// PX and PEXPIRE take whole milliseconds; never round a positive duration to zero
		return bytes(Long.toString(Math.max(1, duration.toMillis())));
	}

	static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * The Redis keys of one storage key.
	 *
	 * @param lock holds the owner token of the current claim
	 * @param record holds the completed record
	 */
	record Keys(byte[] lock, byte[] record) {

	}

	/**
	 * A Lua script shipped beside the stores, with its SHA1 digest computed once.
	 *
	 * @param source the script text
	 * @param sha1 its SHA1 digest in lowercase hex, as {@code EVALSHA} wants it
	 * @param returnType how its reply is read
	 */
	record Script(byte[] source, String sha1, ReturnType returnType) {

		static Script load(String name, ReturnType returnType) {
			// beside the stores: dev/idempo/store/redis/<name>
			ClassPathResource resource = new ClassPathResource(name, RedisScripts.class);
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
