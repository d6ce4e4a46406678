package dev.idempo.method;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;
import dev.idempo.flow.ClaimMode;
import dev.idempo.core.CurrentIdempotentCall;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.RequestOutcome;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.core.ObservedLockingStore;
import dev.idempo.flow.PlainClaimMode;
import dev.idempo.flow.RequestFlow;
import dev.idempo.core.StorageKeys;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;
import dev.idempo.transaction.TransactionalClaimMode;
import dev.idempo.transaction.TransactionalClaims;

/**
 * Runs idempotent calls outside the web layer ({@code @Idempotent(key = ...)} methods and
 * the {@code IdempotencyTemplate}) on the same stores, leases, metrics and transactional
 * mode as web requests. One call:
 * <ul>
 * <li>a completed record of the key: its result is returned without running the work (or,
 * if the call's fingerprint differs, {@link IdempotencyKeyReusedException});</li>
 * <li>another call holds the key: {@link IdempotencyInProgressException} at once;</li>
 * <li>otherwise the work runs, bound to the thread as the {@link CurrentIdempotentCall}
 * (so outbound calls derive their keys from it), and its result is stored for the call's
 * TTL; if it throws, nothing is stored, the key is freed and the same exception
 * propagates.</li>
 * </ul>
 * The store failing: fail closed (the store's exception, the work does not run) unless
 * {@code idempo.store-failure.mode=fail-open}; transactional calls always fail closed.
 *
 * @author idempo
 */
public final class IdempotentCalls {

	private static final Log logger = LogFactory.getLog(IdempotentCalls.class);

	/** The fingerprint of records whose calls are not verified. */
	static final String UNVERIFIED = "-";

	private final LockingStore rawStore;

	private volatile PlainClaimMode plain;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final RequestFlow flow;

	private final LeaseRenewer leaseRenewer;

	private final JsonResults results;

	private final @Nullable TransactionalClaimMode transactional;

	/**
	 * Creates the engine.
	 * @param store the store
	 * @param listener the listener for metrics
	 * @param settings the settings (lock TTL, fail-open)
	 * @param leaseRenewer renews leases on stores whose claims expire
	 * @param results writes and reads results
	 * @param transactional runs transactional calls, {@code null} if the store cannot
	 */
	public IdempotentCalls(LockingStore store, IdempotencyListener listener, IdempotencySettings settings,
			LeaseRenewer leaseRenewer, JsonResults results, @Nullable TransactionalClaims transactional) {
		this.rawStore = store;
		this.listener = listener;
		this.settings = settings;
		this.flow = new RequestFlow(settings);
		this.leaseRenewer = leaseRenewer;
		this.plain = new PlainClaimMode(new ObservedLockingStore(store, listener), settings, leaseRenewer);
		this.results = results;
		this.transactional = (transactional != null) ? new TransactionalClaimMode(transactional, listener) : null;
	}

	/**
	 * Observes store operations ({@value ObservedLockingStore#OBSERVATION}).
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.plain = new PlainClaimMode(new ObservedLockingStore(this.rawStore, this.listener, observationRegistry),
				this.settings, this.leaseRenewer);
	}

	/**
	 * How results are written and read.
	 * @return the results
	 */
	public JsonResults results() {
		return this.results;
	}

	/**
	 * Whether transactional calls can run (a SQL store with spring-tx).
	 * @return whether they can
	 */
	public boolean supportsTransactional() {
		return this.transactional != null;
	}

	/**
	 * Runs a call under its key.
	 * @param call what is called
	 * @param work the work
	 * @return the work's result, or the stored result of an earlier call with the key
	 * @throws Throwable what the work threw, unchanged;
	 * {@link IdempotencyInProgressException}, {@link IdempotencyKeyReusedException}, or
	 * the store's exception (fail-closed)
	 */
	public @Nullable Object execute(Call call, Work work) throws Throwable {
		String storageKey = StorageKeys.of(call.scope(), call.key());
		ClaimMode<?> mode = mode(call);
		ClaimMode.Claim<?> claim;
		try {
			claim = mode.claim(storageKey, Duration.ZERO);
		}
		catch (RuntimeException ex) {
			if (!mode.isStoreFailure(ex)) {
				throw ex;
			}
			if (this.flow.storeFailed(mode.failsOpen()) instanceof RequestFlow.Unprotected<?>) {
				return runUnprotected(call, storageKey, work, ex);
			}
			this.listener.onRequest(call.source(), RequestOutcome.STORE_ERROR);
			throw ex;
		}
		RequestFlow.Decision<?> decision = this.flow.decide(claim, (stored) -> isSameCall(call, stored), List.of());
		if (decision instanceof RequestFlow.Execute<?> execute) {
			return run(call, storageKey, (ClaimMode.Hold) execute.hold(), work);
		}
		if (decision instanceof RequestFlow.Replay<?> replay) {
			return replay(call, replay.record());
		}
		RequestFlow.Rejection rejection = ((RequestFlow.Reject<?>) decision).rejection();
		this.listener.onRequest(call.source(), rejection.outcome());
		throw rejected(call, rejection);
	}

	/**
	 * Whether a record's fingerprint is the call's: always, for calls that carry none.
	 * @param call the call
	 * @param recordFingerprint the fingerprint of the record its claim found
	 * @return whether it is the call's record
	 */
	static boolean isSameCall(Call call, String recordFingerprint) {
		String fingerprint = call.fingerprint();
		return fingerprint == null || fingerprint.equals(recordFingerprint);
	}

	/**
	 * What a call refused by the flow throws: the key reused with other arguments, or in
	 * progress.
	 * @param call the call
	 * @param rejection the flow's rejection
	 * @return the exception
	 */
	static RuntimeException rejected(Call call, RequestFlow.Rejection rejection) {
		return (rejection.outcome() == RequestOutcome.MISMATCH) ? new IdempotencyKeyReusedException(call.scope())
				: new IdempotencyInProgressException(call.scope());
	}

	private ClaimMode<?> mode(Call call) {
		if (!call.transactional()) {
			return this.plain;
		}
		ClaimMode<?> transactional = this.transactional;
		if (transactional == null) {
			throw new IllegalStateException("A transactional idempotent call (" + call.scope() + ") was made, but "
					+ "transactional mode is not configured (it needs the postgres or mysql store)");
		}
		return transactional;
	}

	private @Nullable Object runUnprotected(Call call, String storageKey, Work work, RuntimeException failure)
			throws Throwable {
		logger.warn("Idempotency store failed; running " + call.scope() + " unprotected (fail-open)", failure);
		this.listener.onRequest(call.source(), RequestOutcome.UNPROTECTED);
		try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind(storageKey)) {
			return work.run();
		}
	}

	private @Nullable Object run(Call call, String storageKey, ClaimMode.Hold hold, Work work) throws Throwable {
		this.listener.onRequest(call.source(), RequestOutcome.EXECUTED);
		hold.workStarted();
		Object result;
		try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind(storageKey)) {
			result = work.run();
		}
		catch (Throwable ex) {
			// checked or not: the work failed, so nothing of it is kept where it can be
			hold.workEnded();
			release(call, hold, NotStoredReason.EXCEPTION, ex);
			throw ex;
		}
		hold.workEnded();
		if (!call.cacheResult()) {
			release(call, hold, NotStoredReason.DISABLED, null);
			return result;
		}
		if (hold.isLost()) {
			this.listener.onResponse(call.source(), ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
			return result;
		}
		byte[] envelope = encode(call, hold, result);
		return (envelope != null) ? complete(call, hold, result, envelope) : result;
	}

	/**
	 * The result as JSON, or {@code null} if it cannot be written and the work's effects
	 * stay (the claim then released).
	 */
	private byte @Nullable [] encode(Call call, ClaimMode.Hold hold, @Nullable Object result) {
		try {
			return this.results.encode(result, call.resultType());
		}
		catch (JacksonException ex) {
			if (hold.commitsWithWork()) {
				release(call, hold, NotStoredReason.UNSERIALIZABLE, ex);
				throw new IllegalStateException("The result of " + call.scope() + " could not be written as JSON; "
						+ "its transaction was rolled back", ex);
			}
			// the work has had its effects: return its result, as for a response too
			// large to store, and let the next call with the key run it again
			logger.error("The result of " + call.scope() + " could not be written as JSON, so it was not stored "
					+ "and the next call with its key runs again", ex);
			release(call, hold, NotStoredReason.UNSERIALIZABLE, ex);
			return null;
		}
		catch (RuntimeException | Error ex) {
			// a serializer that failed hard: the key must not stay claimed (on stores
			// whose claims do not expire, for good)
			if (hold.commitsWithWork()) {
				hold.recordFailed(ex);
				this.listener.onResponse(call.source(), ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
			}
			else {
				release(call, hold, NotStoredReason.UNSERIALIZABLE, ex);
			}
			throw ex;
		}
	}

	private @Nullable Object complete(Call call, ClaimMode.Hold hold, @Nullable Object result, byte[] envelope) {
		try {
			boolean stored = hold.complete(new StoredRecord(fingerprint(call), envelope), call.ttl());
			this.listener.onResponse(call.source(), stored ? ResponseOutcome.STORED : ResponseOutcome.LOCK_LOST,
					NotStoredReason.NONE);
		}
		catch (ClaimMode.NotCommittedException ex) {
			this.listener.onResponse(call.source(), ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
			throw notCommitted(call, ex.getCause());
		}
		catch (RuntimeException ex) {
			// the work has had its effects, which an exception would hide from the caller
			logger.warn("Could not store the result of " + call.scope() + "; the next call with its key runs again",
					ex);
			this.listener.onResponse(call.source(), ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
		}
		catch (Error ex) {
			// only a claim the lease still owns is freed, never a record that was stored
			release(call, hold, NotStoredReason.NONE, ex);
			throw ex;
		}
		return result;
	}

	/** What a call whose transaction was rolled back throws: the store's exception. */
	private static RuntimeException notCommitted(Call call, Throwable cause) {
		if (cause instanceof Error error) {
			throw error;
		}
		if (cause instanceof RuntimeException ex) {
			return ex;
		}
		return new LockingStoreException(
				"Could not store the result of " + call.scope() + "; its transaction was rolled back", cause);
	}

	private @Nullable Object replay(Call call, StoredRecord record) {
		Object result;
		try {
			result = this.results.decode(record.response(), call.resultType());
		}
		catch (IllegalArgumentException | JacksonException ex) {
			// running the work again could repeat its effects: fail closed
			this.listener.onRequest(call.source(), RequestOutcome.STORE_ERROR);
			throw new IllegalStateException("The stored result of " + call.scope() + " cannot be read as "
					+ call.resultType() + " (did its type change?); evict the record to run the call again", ex);
		}
		this.listener.onRequest(call.source(), RequestOutcome.REPLAYED);
		return result;
	}

	private void release(Call call, ClaimMode.Hold hold, NotStoredReason reason, @Nullable Throwable failure) {
		try {
			boolean released = hold.release(failure);
			this.listener.onResponse(call.source(), released ? ResponseOutcome.NOT_STORED : ResponseOutcome.LOCK_LOST,
					reason);
		}
		catch (RuntimeException ex) {
			// never hides what the work threw or returned; the claim lapses with its
			// lease
			logger.warn("Could not release the idempotency key of " + call.scope(), ex);
			this.listener.onResponse(call.source(), ResponseOutcome.STORE_ERROR, reason);
		}
	}

	private static String fingerprint(Call call) {
		String fingerprint = call.fingerprint();
		return (fingerprint != null) ? fingerprint : UNVERIFIED;
	}

	/**
	 * The protected work of a call.
	 */
	@FunctionalInterface
	public interface Work {

		/**
		 * Runs the work.
		 * @return its result
		 * @throws Throwable whatever it throws
		 */
		@Nullable Object run() throws Throwable;

	}

	/**
	 * One idempotent call.
	 *
	 * @param source what makes the call, for metrics
	 * @param scope what the key belongs to
	 * ({@code method:<class>#<method>(<parameter types>)} or {@code template:<scope>})
	 * @param key the idempotency key
	 * @param fingerprint a digest of the call's arguments, compared with the stored
	 * record's; {@code null} to not compare
	 * @param resultType the declared type of the result
	 * @param ttl how long the result is kept
	 * @param cacheResult whether the result is stored ({@code false}: lock only)
	 * @param transactional whether the work runs in one transaction with its record
	 */
	public record Call(Source source, String scope, String key, @Nullable String fingerprint, JavaType resultType,
			Duration ttl, boolean cacheResult, boolean transactional) {

		public Call {
			Objects.requireNonNull(scope, "scope");
			Objects.requireNonNull(key, "key");
		}

	}

}
