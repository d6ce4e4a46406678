package dev.idempo.method;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.core.JacksonException;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;
import dev.idempo.flow.ClaimMode.Claim;
import dev.idempo.core.CurrentIdempotentCall;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.RequestOutcome;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.flow.ReactiveClaimMode;
import dev.idempo.flow.RequestFlow;
import dev.idempo.flow.ReactiveClaimMode.ReactiveHold;
import dev.idempo.core.StorageKeys;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;

import org.springframework.util.Assert;

/**
 * Runs idempotent calls whose result arrives later, a {@link Mono} or a
 * {@link CompletableFuture}, on a {@link ReactiveLockingStore}, with the semantics of
 * {@link IdempotentCalls}: the same records (a blocking and a reactive method of one
 * scope share them), outcomes and metrics.
 * <ul>
 * <li>A {@code Mono} is claimed when it is subscribed, and each subscription is a call of
 * its own. A {@code CompletableFuture} is claimed when the method is called.</li>
 * <li>A value (or a {@code Mono} completing empty) is stored, then handed on; an error
 * releases the key and is handed on unchanged; a cancelled call releases the key.</li>
 * <li>A completed record: its result in the same type, the method not called; another
 * call holding the key: {@link IdempotencyInProgressException}; another fingerprint:
 * {@link IdempotencyKeyReusedException}; all as errors of the {@code Mono} (or the
 * future), never thrown by the call itself.</li>
 * </ul>
 * The store's answers never run the work on a thread that must not block: the work is
 * called on the thread that delivers the claim's answer, which a non-blocking store keeps
 * non-blocking; a future's method, which may well block before it returns its future, is
 * called on {@link Schedulers#boundedElastic()}. Completes and releases, once sent, are
 * not cancelled with their call, so a cancelled subscriber never leaves a key claimed.
 * Transactional mode is not supported (the method is refused at start-up).
 *
 * @author idempo
 */
public final class ReactiveIdempotentCalls {

	private static final Log logger = LogFactory.getLog(ReactiveIdempotentCalls.class);

	private final RequestFlow flow;

	private final ReactiveClaimMode claims;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final JsonResults results;

	/**
	 * Creates the engine.
	 * @param store the store
	 * @param listener the listener for metrics
	 * @param settings the settings (lock TTL, fail-open)
	 * @param results writes and reads results, as for {@link IdempotentCalls}
	 * @param leaseRenewer renews leases on stores whose claims expire, as for every entry
	 * point
	 */
	public ReactiveIdempotentCalls(ReactiveLockingStore store, IdempotencyListener listener,
			IdempotencySettings settings, JsonResults results, LeaseRenewer leaseRenewer) {
		Assert.notNull(store, "'store' must not be null");
		this.flow = new RequestFlow(settings);
		this.claims = new ReactiveClaimMode(store, settings, leaseRenewer, listener);
		this.listener = listener;
		this.settings = settings;
		this.results = results;
	}

	/**
	 * A call whose result is a {@code Mono}: claimed at each subscription.
	 * @param call what is called (never transactional)
	 * @param work assembles the method's {@code Mono} (a {@code null} is an empty one);
	 * called only when the call runs
	 * @return the result, or the stored result of an earlier call with the key
	 */
	public Mono<Object> execute(IdempotentCalls.Call call, IdempotentCalls.Work work) {
		return Mono.defer(() -> {
			if (call.transactional()) {
				return Mono.error(new IllegalStateException("Reactive idempotent calls cannot be transactional"));
			}
			String storageKey = StorageKeys.of(call.scope(), call.key());
			return this.claims.claim(storageKey, Duration.ZERO)
				.onErrorMap((ex) -> new ClaimFailure(ex))
				.flatMap((claim) -> answer(call, storageKey, claim, work))
				.onErrorResume(ClaimFailure.class, (failure) -> storeFailed(call, storageKey, work, failure));
		});
	}

	/**
	 * A call whose result is a {@code CompletableFuture}: claimed now; the method is
	 * called on {@link Schedulers#boundedElastic()} once the key is held.
	 * @param call what is called (never transactional)
	 * @param work calls the method, which answers a {@code CompletionStage} (a
	 * {@code null} is an empty result)
	 * @return the result, or the stored result of an earlier call with the key;
	 * cancelling it releases the key
	 */
	public CompletableFuture<Object> executeFuture(IdempotentCalls.Call call, IdempotentCalls.Work work) {
		IdempotentCalls.Work assembled = () -> Mono.deferContextual((context) -> {
			Object stage;
			CurrentIdempotentCall current = context.getOrDefault(CurrentIdempotentCall.CONTEXT_KEY, null);
			try (CurrentIdempotentCall.Binding binding = (current != null) ? CurrentIdempotentCall.bind(current)
					: null) {
				stage = work.run();
			}
			catch (Throwable ex) {
				return Mono.error(ex);
			}
			return (stage != null) ? Mono.fromCompletionStage((CompletionStage<?>) stage) : Mono.empty();
		}).subscribeOn(Schedulers.boundedElastic());
		return execute(call, assembled).toFuture();
	}

	private Mono<Object> answer(IdempotentCalls.Call call, String storageKey, Claim<ReactiveHold> claim,
			IdempotentCalls.Work work) {
		RequestFlow.Decision<ReactiveHold> decision = this.flow.decide(claim,
				(stored) -> IdempotentCalls.isSameCall(call, stored), List.of());
		if (decision instanceof RequestFlow.Execute<ReactiveHold> execute) {
			return run(call, storageKey, execute.hold(), work);
		}
		if (decision instanceof RequestFlow.Replay<ReactiveHold> replay) {
			return replay(call, replay.record());
		}
		RequestFlow.Rejection rejection = ((RequestFlow.Reject<ReactiveHold>) decision).rejection();
		this.listener.onRequest(call.source(), rejection.outcome());
		return Mono.error(IdempotentCalls.rejected(call, rejection));
	}

	private Mono<Object> storeFailed(IdempotentCalls.Call call, String storageKey, IdempotentCalls.Work work,
			ClaimFailure failure) {
		if (!(this.flow.storeFailed(this.settings.failOpen()) instanceof RequestFlow.Unprotected<?>)) {
			this.listener.onRequest(call.source(), RequestOutcome.STORE_ERROR);
			return Mono.error(failure.getCause());
		}
		logger.warn("Idempotency store failed; running " + call.scope() + " unprotected (fail-open)",
				failure.getCause());
		this.listener.onRequest(call.source(), RequestOutcome.UNPROTECTED);
		return assemble(storageKey, work);
	}

	/** The method's {@code Mono}, with the execution bound while it is assembled. */
	private static Mono<Object> assemble(String storageKey, IdempotentCalls.Work work) {
		CurrentIdempotentCall current = CurrentIdempotentCall.of(storageKey);
		return Mono.<Object>defer(() -> {
			Object mono;
			try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind(current)) {
				mono = work.run();
			}
			catch (Throwable ex) {
				return Mono.error(ex);
			}
			return (mono != null) ? (Mono<?>) mono : Mono.empty();
		}).contextWrite((context) -> context.put(CurrentIdempotentCall.CONTEXT_KEY, current));
	}

	private Mono<Object> run(IdempotentCalls.Call call, String storageKey, ReactiveHold hold,
			IdempotentCalls.Work work) {
		this.listener.onRequest(call.source(), RequestOutcome.EXECUTED);
		hold.workStarted();
		return assemble(storageKey, work)
			.onErrorResume((ex) -> hold.release(call.source(), NotStoredReason.EXCEPTION).then(Mono.error(ex)))
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((result) -> keep(call, hold, result.orElse(null)).then(Mono.justOrEmpty(result)))
			.doOnCancel(() -> hold.release(call.source(), NotStoredReason.CANCELLED).subscribe());
	}

	private Mono<Void> keep(IdempotentCalls.Call call, ReactiveHold hold, @Nullable Object result) {
		if (!call.cacheResult()) {
			return hold.release(call.source(), NotStoredReason.DISABLED);
		}
		byte[] envelope;
		try {
			envelope = this.results.encode(result, call.resultType());
		}
		catch (JacksonException ex) {
			logger.error("The result of " + call.scope() + " could not be written as JSON, so it was not stored "
					+ "and the next call with its key runs again", ex);
			return hold.release(call.source(), NotStoredReason.UNSERIALIZABLE);
		}
		catch (RuntimeException | Error ex) {
			// a serializer that failed hard: the key must not stay claimed
			return hold.release(call.source(), NotStoredReason.UNSERIALIZABLE).then(Mono.error(ex));
		}
		return hold.store(call.source(), new StoredRecord(fingerprint(call), envelope), call.ttl(),
				"the result of " + call.scope());
	}

	private Mono<Object> replay(IdempotentCalls.Call call, StoredRecord record) {
		Object result;
		try {
			result = this.results.decode(record.response(), call.resultType());
		}
		catch (IllegalArgumentException | JacksonException ex) {
			this.listener.onRequest(call.source(), RequestOutcome.STORE_ERROR);
			return Mono.error(new IllegalStateException("The stored result of " + call.scope() + " cannot be read as "
					+ call.resultType() + " (did its type change?); evict the record to run the call again", ex));
		}
		this.listener.onRequest(call.source(), RequestOutcome.REPLAYED);
		return Mono.justOrEmpty(result);
	}

	private static String fingerprint(IdempotentCalls.Call call) {
		String fingerprint = call.fingerprint();
		return (fingerprint != null) ? fingerprint : IdempotentCalls.UNVERIFIED;
	}

	/** A claim that failed on the store, told apart from what the work signals. */
	private static final class ClaimFailure extends RuntimeException {

		ClaimFailure(Throwable cause) {
			super(cause.getMessage(), cause, false, false);
		}

	}

}
