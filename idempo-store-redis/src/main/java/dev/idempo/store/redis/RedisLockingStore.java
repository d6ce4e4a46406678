package dev.idempo.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.RecordState;
import dev.idempo.store.OwnerTokens;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.redis.RedisScripts.Keys;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.PoolException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisPipelineException;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;

import static dev.idempo.store.redis.RedisScripts.bytes;
import static dev.idempo.store.redis.RedisScripts.isNoScript;
import static dev.idempo.store.redis.RedisScripts.isOne;
import static dev.idempo.store.redis.RedisScripts.milliseconds;

/**
 * A {@link LockingStore} in Redis (standalone, Sentinel or Cluster), through Spring Data
 * Redis.
 * <p>
 * Each storage key owns two Redis keys that share a hash tag, and so one Cluster slot:
 * <ul>
 * <li>{@code <prefix>{<storage key>}:lock}, a string holding the owner token of the
 * current claim, with a time to live of the lock TTL;</li>
 * <li>{@code <prefix>{<storage key>}:record}, a hash with the fields {@code fingerprint},
 * {@code response} (the encoded response, stored as raw bytes) and {@code completion}
 * (the random id of the complete that wrote it, so that the same complete resent by the
 * client after a reconnect is told it stored), with a time to live of the record
 * TTL.</li>
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
 * <p>
 * Redis replicates asynchronously: a record the primary has stored, and whose response
 * the client has, may not have reached a replica yet when that replica is promoted, and a
 * retry then runs the handler again. {@link #withReplicaAcknowledgements} makes each
 * complete wait, with {@code WAIT}, until that many replicas have the record or a timeout
 * passes; see there for what it does and does not guarantee.
 *
 * @author idempo
 */
public final class RedisLockingStore implements LockingStore {

	/** The key prefix used unless configured otherwise. */
	public static final String DEFAULT_KEY_PREFIX = "idempo:";

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisLockingStore.class.getClassLoader());

	private static final Log logger = LogFactory.getLog(RedisLockingStore.class);

	private final RedisConnectionFactory connectionFactory;

	private final String keyPrefix;

	private final byte[] evictionChannel;

	/** How many replicas must acknowledge a complete; 0: none, no {@code WAIT}. */
	private final int replicaAcknowledgements;

	/** {@code WAIT}'s arguments, or {@code null} when it is not sent. */
	private final byte @Nullable [][] waitArguments;

	private final LongAdder acknowledgedCompletes = new LongAdder();

	private final LongAdder unacknowledgedCompletes = new LongAdder();

	private final AtomicBoolean waitUnsupportedWarned = new AtomicBoolean();

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
		RedisScripts.checkKeyPrefix(keyPrefix);
		this.connectionFactory = connectionFactory;
		this.keyPrefix = keyPrefix;
		this.evictionChannel = bytes(keyPrefix + "evictions");
		this.replicaAcknowledgements = 0;
		this.waitArguments = null;
	}

	private RedisLockingStore(RedisLockingStore store, int replicas, Duration timeout) {
		this.connectionFactory = store.connectionFactory;
		this.keyPrefix = store.keyPrefix;
		this.evictionChannel = store.evictionChannel;
		this.replicaAcknowledgements = replicas;
		this.waitArguments = (replicas > 0)
				? new byte[][] { bytes(Integer.toString(replicas)), milliseconds(timeout, "timeout") } : null;
	}

	/**
	 * A store like this one whose every successful complete then waits until
	 * {@code replicas} replicas of the primary have acknowledged it, or {@code timeout}
	 * passes ({@code WAIT replicas timeout}, sent on the connection that wrote the
	 * record, right behind the write).
	 * <p>
	 * It narrows the window of asynchronous replication; it does not close it. Once
	 * {@code WAIT} has answered, {@code replicas} replicas hold the record in memory, so
	 * promoting one of them (by Sentinel, an operator or a managed service) keeps it; the
	 * response reaches the client only afterwards. It does not guarantee that:
	 * <ul>
	 * <li>fewer replicas acknowledge in time (a replica is down, lagging or promoted):
	 * the record is stored on the primary, the response is sent anyway (the handler has
	 * run), and the complete is counted as {@linkplain #unacknowledgedCompletes()
	 * unacknowledged};</li>
	 * <li>with more replicas than {@code replicas}, the one promoted is one that
	 * acknowledged;</li>
	 * <li>a replica that restarts without persistence keeps what it acknowledged;</li>
	 * <li>claims are replicated: only completes wait, so a failover may still free a key
	 * whose handler runs, and a retry runs it alongside (as after a lost lease).</li>
	 * </ul>
	 * The write and its {@code WAIT} go, one after the other, on a connection of their
	 * own (Spring Data Redis's dedicated connection of a pipeline) rather than on the
	 * connection Lettuce shares between all requests: a {@code WAIT} blocks its
	 * connection on the server, and on the shared one it would hold up every other
	 * request's commands until the replicas answer or the timeout passes. Unless the
	 * connection factory pools connections, that is a new connection per complete. A
	 * failed or timed-out {@code WAIT} (keep {@code timeout} below the client's command
	 * timeout) counts as unacknowledged; the record stays stored. Lettuce only, and not
	 * with Redis Cluster, where the write goes to the key's master, nor with Jedis, whose
	 * client may run each command on another pooled connection: there completes do not
	 * wait and are counted as unacknowledged.
	 * @param replicas how many replicas must acknowledge; 0 turns waiting off
	 * @param timeout how long a complete waits for them at most; positive (Redis would
	 * take 0 as forever)
	 * @return the store
	 */
	public RedisLockingStore withReplicaAcknowledgements(int replicas, Duration timeout) {
		Assert.isTrue(replicas >= 0, "'replicas' must not be negative");
		Assert.notNull(timeout, "'timeout' must not be null");
		return new RedisLockingStore(this, replicas, timeout);
	}

	/**
	 * The connection factory this store talks to Redis through.
	 * @return the connection factory
	 */
	public RedisConnectionFactory connectionFactory() {
		return this.connectionFactory;
	}

	/**
	 * The prefix of every key this store writes.
	 * @return the key prefix
	 */
	public String keyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * How many replicas must acknowledge a complete.
	 * @return the number, 0 when completes do not wait
	 */
	public int replicaAcknowledgements() {
		return this.replicaAcknowledgements;
	}

	/**
	 * Completes that stored their record and were acknowledged by the required number of
	 * replicas, since this store was created. Always 0 when completes do not wait.
	 * @return the count
	 */
	public long acknowledgedCompletes() {
		return this.acknowledgedCompletes.sum();
	}

	/**
	 * Completes that stored their record on the primary but were not acknowledged by the
	 * required number of replicas in time (or whose acknowledgement could not be read),
	 * since this store was created: their records may be lost by a failover. Always 0
	 * when completes do not wait.
	 * @return the count
	 */
	public long unacknowledgedCompletes() {
		return this.unacknowledgedCompletes.sum();
	}

	@Override
	public ClaimResult claim(String key, Duration lockTtl) {
		Keys keys = keys(key);
		String token = OwnerTokens.next();
		List<?> reply = (List<?>) execute("claim", RedisScripts.CLAIM, 2,
				RedisScripts.claimArguments(keys, token, lockTtl));
		return RedisScripts.claimResult(key, keys, token, reply);
	}

	@Override
	public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
		byte[][] keysAndArgs = RedisScripts.completeArguments(this.keyPrefix, lease, record, ttl);
		byte[][] waitArguments = this.waitArguments;
		if (waitArguments == null) {
			return isOne(execute("complete", RedisScripts.COMPLETE, 2, keysAndArgs), "complete");
		}
		return completeAwaitingReplicas(keysAndArgs, waitArguments);
	}

	/**
	 * Runs the complete script, then {@code WAIT} on the same connection; counts whether
	 * enough replicas acknowledged a record that was stored.
	 */
	private boolean completeAwaitingReplicas(byte[][] keysAndArgs, byte[][] waitArguments) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			if (connection instanceof RedisClusterConnection || !LETTUCE_PRESENT || !Lettuce.isLettuce(connection)) {
				return completeWithoutWaiting(connection, keysAndArgs);
			}
			Object stored = Lettuce.complete(connection, keysAndArgs);
			boolean completed = isOne(stored, "complete");
			if (completed) {
				// the record is stored whatever WAIT answers: a failure of WAIT is only a
				// missing acknowledgement
				Object acknowledged;
				try {
					acknowledged = Lettuce.await(connection, waitArguments);
				}
				catch (RuntimeException ex) {
					acknowledged = ex;
				}
				countAcknowledgement(acknowledged);
			}
			return completed;
		}
		catch (DataAccessException | PoolException ex) {
			throw new LockingStoreException("Redis complete failed: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Where {@code WAIT} cannot follow the write on the same connection (Redis Cluster,
	 * Jedis, whose unified client may run each command on another pooled connection):
	 * stores without waiting and counts the record as unacknowledged.
	 */
	private boolean completeWithoutWaiting(RedisConnection connection, byte[][] keysAndArgs) {
		boolean stored = isOne(evalShaOrEval(connection, RedisScripts.COMPLETE, 2, keysAndArgs), "complete");
		if (stored) {
			this.unacknowledgedCompletes.increment();
			if (this.waitUnsupportedWarned.compareAndSet(false, true)) {
				logger.warn("idempo.store.redis.replica-acknowledgements needs a standalone or Sentinel Redis through "
						+ "Lettuce; with " + connection.getClass().getSimpleName()
						+ " completes do not wait for replicas");
			}
		}
		return stored;
	}

	private void countAcknowledgement(@Nullable Object reply) {
		if (reply instanceof Long replicas && replicas >= this.replicaAcknowledgements) {
			this.acknowledgedCompletes.increment();
			return;
		}
		this.unacknowledgedCompletes.increment();
		if (logger.isDebugEnabled()) {
			logger.debug("Idempotency record stored on the Redis primary, but WAIT answered " + describe(reply)
					+ " where " + this.replicaAcknowledgements + " replicas were required; a failover may lose it");
		}
	}

	private static String describe(@Nullable Object reply) {
		return (reply instanceof Throwable failure) ? failure.toString() : String.valueOf(reply);
	}

	@Override
	public boolean release(Lease lease) {
		Object released = execute("release", RedisScripts.RELEASE, 1,
				RedisScripts.releaseArguments(this.keyPrefix, lease));
		return isOne(released, "release");
	}

	@Override
	public boolean renew(Lease lease, Duration lockTtl) {
		Object renewed = execute("renew", RedisScripts.RENEW, 1,
				RedisScripts.renewArguments(this.keyPrefix, lease, lockTtl));
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

	private Keys keys(String key) {
		return RedisScripts.keys(this.keyPrefix, key);
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
			// every instance drops its local copy, whether this one found a record or not
			connection.publish(this.evictionChannel, bytes(key));
			return deleted != null && deleted > 0;
		}
		catch (DataAccessException | PoolException ex) {
			throw new LockingStoreException("Redis evict failed: " + ex.getMessage(), ex);
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * {@link #evict} publishes each evicted key on the channel
	 * {@link #evictionChannel()}; this subscribes {@code listener} to it with a
	 * {@link RedisMessageListenerContainer} of its own (one connection), which is
	 * subscribed when this returns. A message published while an instance is disconnected
	 * is lost to it: its copy then lives until it expires.
	 */
	@Override
	public AutoCloseable subscribeToEvictions(Consumer<String> listener) {
		Assert.notNull(listener, "'listener' must not be null");
		RedisMessageListenerContainer container = new RedisMessageListenerContainer();
		container.setConnectionFactory(this.connectionFactory);
		container.addMessageListener(
				(message, pattern) -> listener.accept(new String(message.getBody(), StandardCharsets.UTF_8)),
				new ChannelTopic(new String(this.evictionChannel, StandardCharsets.UTF_8)));
		try {
			container.afterPropertiesSet();
			container.start();
		}
		catch (DataAccessException | PoolException ex) {
			container.stop();
			throw new LockingStoreException("Redis could not subscribe to evictions: " + ex.getMessage(), ex);
		}
		return container::destroy;
	}

	/**
	 * The pub/sub channel on which {@link #evict} announces evicted keys: the key prefix
	 * followed by {@code evictions}.
	 * @return the channel name
	 */
	public String evictionChannel() {
		return new String(this.evictionChannel, StandardCharsets.UTF_8);
	}

	/**
	 * Checks that Redis answers a {@code PING} on the store's connection factory.
	 * @return no details
	 * @throws LockingStoreException if Redis does not answer
	 */
	@Override
	public Map<String, Object> checkHealth() {
		ping();
		return Map.of();
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
	private @Nullable Object execute(String operation, RedisScripts.Script script, int numKeys, byte[]... keysAndArgs) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return evalShaOrEval(connection, script, numKeys, keysAndArgs);
		}
		catch (DataAccessException | PoolException ex) {
			throw new LockingStoreException("Redis " + operation + " failed: " + ex.getMessage(), ex);
		}
	}

	private static @Nullable Object evalShaOrEval(RedisConnection connection, RedisScripts.Script script, int numKeys,
			byte[]... keysAndArgs) {
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

	/** Apart, so that Lettuce is needed only when it is the client. */
	private static final class Lettuce {

		static boolean isLettuce(RedisConnection connection) {
			return connection instanceof LettuceConnection;
		}

		/**
		 * Runs the complete script in a pipeline of its own: Spring Data Redis sends a
		 * pipeline on the connection's dedicated connection, never on the one shared by
		 * all requests, and keeps that connection until the connection is closed, so that
		 * {@link #await} runs on the connection that wrote. On {@code NOSCRIPT} (the
		 * script never ran) it is sent again with {@code EVAL}.
		 * @return the script's reply
		 */
		static @Nullable Object complete(RedisConnection connection, byte[][] keysAndArgs) {
			try {
				return script(connection, true, keysAndArgs);
			}
			catch (RedisPipelineException ex) {
				if (!isNoScript(ex)) {
					throw ex;
				}
				return script(connection, false, keysAndArgs);
			}
		}

		private static @Nullable Object script(RedisConnection connection, boolean bySha, byte[][] keysAndArgs) {
			LettuceConnection lettuce = (LettuceConnection) connection;
			lettuce.openPipeline();
			try {
				if (bySha) {
					lettuce.scriptingCommands()
						.evalSha(RedisScripts.COMPLETE.sha1(), RedisScripts.COMPLETE.returnType(), 2, keysAndArgs);
				}
				else {
					lettuce.scriptingCommands()
						.eval(RedisScripts.COMPLETE.source(), RedisScripts.COMPLETE.returnType(), 2, keysAndArgs);
				}
			}
			catch (RuntimeException ex) {
				abandon(lettuce);
				throw ex;
			}
			List<@Nullable Object> replies = lettuce.closePipeline();
			if (replies.size() != 1) {
				throw new LockingStoreException(
						"Redis answered a complete pipeline with " + replies.size() + " replies, expected 1");
			}
			return replies.get(0);
		}

		/**
		 * {@code WAIT}, on the dedicated connection that ran {@link #complete}: it waits
		 * for the replicas to have every write made on that connection.
		 * @return the number of replicas that acknowledged
		 */
		static @Nullable Object await(RedisConnection connection, byte[][] waitArguments) {
			LettuceConnection lettuce = (LettuceConnection) connection;
			lettuce.openPipeline();
			try {
				// Spring Data Redis does not know WAIT's reply type: say it
				lettuce.execute("WAIT", new IntegerOutput<>(ByteArrayCodec.INSTANCE), waitArguments);
			}
			catch (RuntimeException ex) {
				abandon(lettuce);
				throw ex;
			}
			List<@Nullable Object> replies = lettuce.closePipeline();
			return replies.isEmpty() ? null : replies.get(0);
		}

		/** Ends a pipeline whose commands could not all be queued. */
		private static void abandon(LettuceConnection lettuce) {
			try {
				lettuce.closePipeline();
			}
			catch (RuntimeException ex) {
				// the failure that led here is the one to report
			}
		}

	}

}
