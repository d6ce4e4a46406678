package dev.idempo.method;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;

import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;
import dev.idempo.core.CurrentIdempotentCall;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.RequestOutcome;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.core.IdempotencyListener.StoreOperation;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.LeaseRenewer;
import dev.idempo.core.ObservedLockingStore;
import dev.idempo.core.StorageKeys;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;
import dev.idempo.transaction.TransactionalClaims;

import org.springframework.transaction.TransactionStatus;

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

	private volatile LockingStore store;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final LeaseRenewer leaseRenewer;

	private final JsonResults results;

	private final @Nullable TransactionalClaims transactional;

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
		this.store = new ObservedLockingStore(store, listener);
		this.settings = settings;
		this.leaseRenewer = leaseRenewer;
		this.results = results;
		this.transactional = transactional;
	}

	/**
	 * Observes store operations ({@value ObservedLockingStore#OBSERVATION}).
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.store = new ObservedLockingStore(this.rawStore, this.listener, observationRegistry);
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
		if (call.transactional()) {
			return executeTransactional(call, storageKey, work);
		}
		ClaimResult claim;
		try {
			claim = this.store.claim(storageKey, this.settings.lockTtl());
		}
		catch (RuntimeException ex) {
			if (this.settings.failOpen()) {
				logger.warn("Idempotency store failed; running " + call.scope() + " unprotected (fail-open)", ex);
				this.listener.onRequest(call.source(), RequestOutcome.UNPROTECTED);
				try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind(storageKey)) {
					return work.run();
				}
			}
			this.listener.onRequest(call.source(), RequestOutcome.STORE_ERROR);
			throw ex;
		}
		if (claim instanceof ClaimResult.Completed completed) {
			return replay(call, completed.record());
		}
		if (claim instanceof ClaimResult.InProgress) {
			this.listener.onRequest(call.source(), RequestOutcome.CONFLICT);
			throw new IdempotencyInProgressException(call.scope());
		}
		ClaimResult.Acquired acquired = (ClaimResult.Acquired) claim;
		this.listener.onRequest(call.source(), RequestOutcome.EXECUTED);
		LeaseRenewer.Renewal renewal = this.store.leaseExpires()
				? this.leaseRenewer.renew(this.store, acquired.lease(), this.settings.lockTtl()) : null;
		Object result;
		try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind(storageKey)) {
			result = work.run();
		}
		catch (Throwable ex) {
			stop(renewal);
			release(call, acquired, NotStoredReason.EXCEPTION);
			throw ex;
		}
		stop(renewal);
		if (!call.cacheResult()) {
			release(call, acquired, NotStoredReason.DISABLED);
			return result;
		}
		if (renewal != null && renewal.isLost()) {
			this.listener.onResponse(call.source(), ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
			return result;
		}
		byte[] envelope;
		try {
			envelope = this.results.encode(result, call.resultType());
		}
		catch (JacksonException ex) {
			// the work has had its effects: return its result, as for a response too
			// large
			// to store, and let the next call with the key run it again
			logger.error("The result of " + call.scope() + " could not be written as JSON, so it was not stored "
					+ "and the next call with its key runs again", ex);
			release(call, acquired, NotStoredReason.UNSERIALIZABLE);
			return result;
		}
		catch (RuntimeException | Error ex) {
			// a serializer that failed hard: the key must not stay claimed (on stores
			// whose claims do not expire, for good)
			release(call, acquired, NotStoredReason.UNSERIALIZABLE);
			throw ex;
		}
		try {
			boolean stored = this.store.complete(acquired.lease(), new StoredRecord(fingerprint(call), envelope),
					call.ttl());
			this.listener.onResponse(call.source(), stored ? ResponseOutcome.STORED : ResponseOutcome.LOCK_LOST,
					NotStoredReason.NONE);
		}
		catch (RuntimeException ex) {
			// the work has had its effects, which an exception would hide from the caller
			logger.warn("Could not store the result of " + call.scope() + "; the next call with its key runs again",
					ex);
			this.listener.onResponse(call.source(), ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
		}
		catch (Error ex) {
			// only a claim the lease still owns is freed, never a record that was stored
			release(call, acquired, NotStoredReason.NONE);
			throw ex;
		}
		return result;
	}

	private @Nullable Object executeTransactional(Call call, String storageKey, Work work) throws Throwable {
		TransactionalClaims transactional = this.transactional;
		if (transactional == null) {
			throw new IllegalStateException("A transactional idempotent call (" + call.scope() + ") was made, but "
					+ "transactional mode is not configured (it needs the postgres or mysql store)");
		}
		long start = System.nanoTime();
		TransactionalClaims.Begun begun;
		try {
			begun = transactional.begin(storageKey);
		}
		catch (LockingStoreException ex) {
			this.listener.onStoreOperation(transactional.storeName(), StoreOperation.CLAIM, System.nanoTime() - start,
					false);
			// never fail-open: the work's writes would commit without a record
			this.listener.onRequest(call.source(), RequestOutcome.STORE_ERROR);
			throw ex;
		}
		this.listener.onStoreOperation(transactional.storeName(), StoreOperation.CLAIM, System.nanoTime() - start,
				true);
		TransactionStatus status = begun.transaction();
		if (status == null) {
			StoredRecord record = begun.record();
			if (record != null) {
				return replay(call, record);
			}
			this.listener.onRequest(call.source(), RequestOutcome.CONFLICT);
			throw new IdempotencyInProgressException(call.scope());
		}
		this.listener.onRequest(call.source(), RequestOutcome.EXECUTED);
		Object result;
		try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind(storageKey)) {
			result = work.run();
		}
		catch (Throwable ex) {
			// checked or not: the work failed, so nothing of it commits
			transactional.rollbackAfterFailure(status, ex);
			this.listener.onResponse(call.source(), ResponseOutcome.NOT_STORED, NotStoredReason.EXCEPTION);
			throw ex;
		}
		start = System.nanoTime();
		try {
			byte[] envelope = this.results.encode(result, call.resultType());
			status.flush();
			transactional.records()
				.insert(transactional.connection(), storageKey, new StoredRecord(fingerprint(call), envelope),
						call.ttl(), transactional.timeoutSeconds());
			transactional.transactionManager().commit(status);
		}
		catch (JacksonException ex) {
			transactional.rollbackAfterFailure(status, ex);
			this.listener.onResponse(call.source(), ResponseOutcome.NOT_STORED, NotStoredReason.UNSERIALIZABLE);
			throw new IllegalStateException("The result of " + call.scope() + " could not be written as JSON; its "
					+ "transaction was rolled back", ex);
		}
		catch (SQLException | RuntimeException | Error ex) {
			// an Error too: the transaction must never stay open on this thread
			transactional.rollbackAfterFailure(status, ex);
			this.listener.onStoreOperation(transactional.storeName(), StoreOperation.COMPLETE,
					System.nanoTime() - start, false);
			this.listener.onResponse(call.source(), ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
			if (ex instanceof SQLException) {
				throw new LockingStoreException(
						"Could not store the result of " + call.scope() + "; its transaction was rolled back", ex);
			}
			throw ex;
		}
		this.listener.onStoreOperation(transactional.storeName(), StoreOperation.COMPLETE, System.nanoTime() - start,
				true);
		this.listener.onResponse(call.source(), ResponseOutcome.STORED, NotStoredReason.NONE);
		return result;
	}

	private @Nullable Object replay(Call call, StoredRecord record) {
		String fingerprint = call.fingerprint();
		if (fingerprint != null && !fingerprint.equals(record.fingerprint())) {
			this.listener.onRequest(call.source(), RequestOutcome.MISMATCH);
			throw new IdempotencyKeyReusedException(call.scope());
		}
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

	private void release(Call call, ClaimResult.Acquired acquired, NotStoredReason reason) {
		try {
			boolean released = this.store.release(acquired.lease());
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

	private static void stop(LeaseRenewer.@Nullable Renewal renewal) {
		if (renewal != null) {
			renewal.stop();
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
