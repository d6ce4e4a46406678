package dev.idempo.store.redis;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.OwnerTokens;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.redis.RedisScripts.Keys;
import dev.idempo.store.redis.RedisScripts.Script;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.PoolException;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.ReactiveScriptingCommands;
import org.springframework.util.Assert;

/**
 * The non-blocking {@link ReactiveLockingStore} in Redis (standalone, Sentinel or
 * Cluster), through Spring Data Redis's {@link ReactiveRedisConnectionFactory} (Lettuce's
 * reactive API underneath).
 * <p>
 * It runs the same Lua scripts as {@link RedisLockingStore} on the same keys (the same
 * prefix, the same hash tags) and reads their replies the same way, so a reactive and a
 * blocking store with one key prefix share their records: a key claimed through one is in
 * progress for the other, a response stored through one is replayed by the other. Scripts
 * go with {@code EVALSHA}, and with {@code EVAL} when the server does not know them yet.
 * <p>
 * Nothing blocks the subscriber's thread or Lettuce's event loop. Spring Data Redis's
 * factory takes a lock to hand out its connection, and connects on first use: so this
 * store asks it for a connection once, on {@link Schedulers#boundedElastic()}, and keeps
 * it (Lettuce reconnects it by itself). A connection that was closed or could not be made
 * is dropped (not closed: other operations may have commands in flight on it), and the
 * next operation asks for a connection again; a timeout keeps the connection. Nothing is
 * asked before the first operation, so an application starts while Redis is down.
 * <p>
 * A claim is sent whole once subscribed: a subscriber that cancels it does not cancel the
 * command, whose answer still arrives; if that answer is that the key was acquired, the
 * key is released at once, so a cancelled request never leaves its key locked until the
 * lease runs out. A claim that fails otherwise than by an error reply of Redis (a
 * timeout, a lost connection) may have run in Redis all the same: its token is released
 * too, at best effort (a compare-and-delete, which never touches another's claim).
 * <p>
 * Replica acknowledgements ({@code WAIT}, see
 * {@link RedisLockingStore#withReplicaAcknowledgements}) are a blocking-store feature:
 * completes made through this store do not wait for replicas.
 *
 * @author idempo
 */
public final class ReactiveRedisLockingStore implements ReactiveLockingStore, AutoCloseable {

	private static final Log logger = LogFactory.getLog(ReactiveRedisLockingStore.class);

	/** In a claim's slot: its subscriber cancelled. */
	private static final Object CANCELLED = new Object();

	private final ReactiveRedisConnectionFactory connectionFactory;

	private final String keyPrefix;

	/** The connection, asked for once and kept while it is {@link #current}. */
	private final Mono<ReactiveRedisConnection> connection;

	/** The connection in use; {@code null} once dropped, until the next is asked for. */
	private final AtomicReference<@Nullable ReactiveRedisConnection> current = new AtomicReference<>();

	/**
	 * Creates a store with the {@linkplain RedisLockingStore#DEFAULT_KEY_PREFIX default
	 * key prefix}.
	 * @param connectionFactory the connection factory to use
	 */
	public ReactiveRedisLockingStore(ReactiveRedisConnectionFactory connectionFactory) {
		this(connectionFactory, RedisLockingStore.DEFAULT_KEY_PREFIX);
	}

	/**
	 * Creates a store.
	 * @param connectionFactory the connection factory to use
	 * @param keyPrefix prepended to every key, as for {@link RedisLockingStore}; must not
	 * contain braces, which would replace the hash tag
	 */
	public ReactiveRedisLockingStore(ReactiveRedisConnectionFactory connectionFactory, String keyPrefix) {
		Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
		RedisScripts.checkKeyPrefix(keyPrefix);
		this.connectionFactory = connectionFactory;
		this.keyPrefix = keyPrefix;
		this.connection = Mono.fromSupplier(this::openConnection)
			.subscribeOn(Schedulers.boundedElastic())
			.cacheInvalidateIf((connection) -> connection != this.current.get());
	}

	private ReactiveRedisConnection openConnection() {
		ReactiveRedisConnection opened = this.connectionFactory.getReactiveConnection();
		this.current.set(opened);
		return opened;
	}

	@Override
	public Mono<ClaimResult> claim(String key, Duration lockTtl) {
		return Mono.defer(() -> {
			Keys keys = RedisScripts.keys(this.keyPrefix, key);
			String token = OwnerTokens.next();
			Mono<ClaimResult> claimed = execute("claim", RedisScripts.CLAIM, 2,
					RedisScripts.claimArguments(keys, token, lockTtl))
				.map((reply) -> RedisScripts.claimResult(key, keys, token, (List<?>) reply))
				.doOnError((ex) -> releaseIfMaybeRun(new Lease(key, token), ex));
			return uncancellable(claimed);
		}).doOnDiscard(ClaimResult.Acquired.class, (acquired) -> releaseAbandoned(acquired.lease()));
	}

	/**
	 * Subscribes to {@code claimed} on behalf of the subscriber (with its context), and
	 * lets it run to its end whatever the subscriber does. The answer goes through a slot
	 * of the subscription: the first of the answer and a cancellation takes it. An answer
	 * that comes after the cancellation, or that was parked in it when the cancellation
	 * came, is released if it acquired the key; only the answer that took the slot is
	 * handed to the sink, and the sink completes empty only if no answer did.
	 */
	private Mono<ClaimResult> uncancellable(Mono<ClaimResult> claimed) {
		return Mono.create((sink) -> {
			AtomicReference<@Nullable Object> slot = new AtomicReference<>();
			sink.onCancel(() -> releaseIfAcquired(slot.getAndSet(CANCELLED)));
			claimed.contextWrite(sink.contextView()).subscribe((answer) -> {
				if (slot.compareAndSet(null, answer)) {
					sink.success(answer);
				}
				else {
					releaseIfAcquired(answer);
				}
			}, sink::error, () -> {
				if (slot.get() == null) {
					sink.success();
				}
			});
		});
	}

	private void releaseIfAcquired(@Nullable Object answer) {
		if (answer instanceof ClaimResult.Acquired acquired) {
			releaseAbandoned(acquired.lease());
		}
	}

	/**
	 * After a claim failed otherwise than by an error reply of Redis (a timeout, a lost
	 * connection), Redis may have run it: its token may own the key, with nobody to
	 * release it. Releasing compares the token, so it never touches another's claim.
	 */
	private void releaseIfMaybeRun(Lease lease, Throwable failure) {
		if (!isErrorReply(failure)) {
			// fails too when the claim never left (Redis is down): nothing to warn of
			release(lease).subscribe(null, (ex) -> logger.debug("Could not release the key of a failed claim", ex));
		}
	}

	/** Gives back a key acquired for a subscriber that had gone. */
	private void releaseAbandoned(Lease lease) {
		release(lease).subscribe(null,
				(ex) -> logger.warn("Could not release an idempotency key claimed for a cancelled request; it stays "
						+ "locked until its lease ends", ex));
	}

	@Override
	public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
		return Mono
			.defer(() -> execute("complete", RedisScripts.COMPLETE, 2,
					RedisScripts.completeArguments(this.keyPrefix, lease, record, ttl)))
			.map((reply) -> RedisScripts.isOne(reply, "complete"));
	}

	@Override
	public Mono<Boolean> release(Lease lease) {
		return Mono.defer(
				() -> execute("release", RedisScripts.RELEASE, 1, RedisScripts.releaseArguments(this.keyPrefix, lease)))
			.map((reply) -> RedisScripts.isOne(reply, "release"));
	}

	@Override
	public Mono<Boolean> renew(Lease lease, Duration lockTtl) {
		return Mono
			.defer(() -> execute("renew", RedisScripts.RENEW, 1,
					RedisScripts.renewArguments(this.keyPrefix, lease, lockTtl)))
			.map((reply) -> RedisScripts.isOne(reply, "renew"));
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
	 * The connection factory this store asks its connection of.
	 * @return the connection factory
	 */
	public ReactiveRedisConnectionFactory connectionFactory() {
		return this.connectionFactory;
	}

	/**
	 * The key prefix, the same as that of a {@link RedisLockingStore} sharing the
	 * records.
	 * @return the key prefix
	 */
	public String keyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * Closes the connection this store holds, if any, without waiting; the connection
	 * factory's shared connection stays open.
	 */
	@Override
	public void close() {
		ReactiveRedisConnection held = this.current.getAndSet(null);
		if (held != null) {
			held.closeLater().subscribe(null, (ex) -> logger.debug("Could not close a Redis connection", ex));
		}
	}

	/**
	 * Runs {@code script} in one round trip: {@code EVALSHA}, or {@code EVAL} if the
	 * server does not know the script yet.
	 * @return the reply: bulk strings as {@code byte[]}, integers as {@code Long}, a
	 * multi-bulk reply as a list of them
	 */
	private Mono<Object> execute(String operation, Script script, int numKeys, byte[][] keysAndArgs) {
		return this.connection
			.flatMap((connection) -> evalShaOrEval(connection, script, numKeys, keysAndArgs)
				.doOnError((ex) -> invalidateIfClosed(connection, ex)))
			.onErrorMap((ex) -> ex instanceof DataAccessException || ex instanceof PoolException,
					(ex) -> new LockingStoreException("Redis " + operation + " failed: " + ex.getMessage(), ex));
	}

	private static Mono<Object> evalShaOrEval(ReactiveRedisConnection connection, Script script, int numKeys,
			byte[][] keysAndArgs) {
		ReactiveScriptingCommands commands = connection.scriptingCommands();
		return commands.evalSha(script.sha1(), script.returnType(), numKeys, buffers(keysAndArgs))
			.collectList()
			.onErrorResume(RedisScripts::isNoScript,
					(ex) -> commands
						.eval(ByteBuffer.wrap(script.source()), script.returnType(), numKeys, buffers(keysAndArgs))
						.collectList())
			.map(ReactiveRedisLockingStore::reply);
	}

	/**
	 * One reply from what Spring Data Redis emits: an integer, or a multi-bulk reply as
	 * one list or as its elements one by one; bulk strings become {@code byte[]}, as the
	 * blocking store reads them.
	 */
	private static Object reply(List<?> emitted) {
		if (emitted.size() == 1 && emitted.get(0) instanceof Long integer) {
			return integer;
		}
		List<?> elements = (emitted.size() == 1 && emitted.get(0) instanceof List<?> list) ? list : emitted;
		List<@Nullable Object> converted = new ArrayList<>(elements.size());
		elements.forEach((element) -> converted.add(toBytes(element)));
		return converted;
	}

	private static @Nullable Object toBytes(@Nullable Object element) {
		if (element instanceof ByteBuffer buffer) {
			byte[] bytes = new byte[buffer.remaining()];
			buffer.duplicate().get(bytes);
			return bytes;
		}
		return element;
	}

	/**
	 * After the connection was closed or could not be made, the next operation asks the
	 * factory for a connection again; a timeout or an error reply keeps it, since Lettuce
	 * reconnects by itself. The dropped connection is not closed: other operations may
	 * still have commands in flight on it (it is left to the factory, or to the garbage
	 * collector once unused). Only the connection in use is dropped, so that a late
	 * failure of an older one does not drop its successor.
	 */
	private void invalidateIfClosed(ReactiveRedisConnection connection, Throwable failure) {
		if (isConnectionLost(failure)) {
			this.current.compareAndSet(connection, null);
		}
	}

	private static boolean isErrorReply(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisCommandExecutionException) {
				return true;
			}
		}
		return false;
	}

	private static boolean isConnectionLost(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisConnectionException || cause instanceof ClosedChannelException
					|| cause instanceof RedisConnectionFailureException
					|| (cause instanceof RedisException && String.valueOf(cause.getMessage()).contains("closed"))) {
				return true;
			}
		}
		return false;
	}

	private static ByteBuffer[] buffers(byte[][] keysAndArgs) {
		ByteBuffer[] buffers = new ByteBuffer[keysAndArgs.length];
		for (int i = 0; i < keysAndArgs.length; i++) {
			buffers[i] = ByteBuffer.wrap(keysAndArgs[i]);
		}
		return buffers;
	}

}
