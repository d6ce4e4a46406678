package dev.idempo.web;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.LeaseRenewer;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;

/**
 * One handler execution under a claimed key, kept as a request attribute from the
 * interceptor's claim to the filter's finish. It ends exactly once: stored and released,
 * or only released. An asynchronous request that timed out or failed while its work may
 * still be running keeps its key until that work ends, so a retry can never run the
 * handler alongside it.
 *
 * @author idempo
 */
final class IdempotentExecution {

	static final String ATTRIBUTE = IdempotentExecution.class.getName();

	private static final Log logger = LogFactory.getLog(IdempotentExecution.class);

	private final LockingStore store;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final LeaseRenewer leaseRenewer;

	private final Lease lease;

	private final String fingerprint;

	private final Duration ttl;

	private volatile NotStoredReason presetReason;

	private final AtomicBoolean finished = new AtomicBoolean();

	private volatile boolean leaseLost;

	private volatile boolean awaitingErrorPage;

	private volatile boolean asyncAbandoned;

	private volatile @Nullable ScheduledFuture<?> renewal;

	// guarded by this: the Callable task of an asynchronous handler
	private boolean taskStarted;

	private boolean taskRunning;

	private boolean releaseWhenTaskEnds;

	IdempotentExecution(LockingStore store, IdempotencyListener listener, IdempotencySettings settings,
			LeaseRenewer leaseRenewer, Lease lease, String fingerprint, Duration ttl, NotStoredReason presetReason) {
		this.store = store;
		this.listener = listener;
		this.settings = settings;
		this.leaseRenewer = leaseRenewer;
		this.lease = lease;
		this.fingerprint = fingerprint;
		this.ttl = ttl;
		this.presetReason = presetReason;
	}

	static @Nullable IdempotentExecution of(ServletRequest request) {
		return (IdempotentExecution) request.getAttribute(ATTRIBUTE);
	}

	void renewWith(ScheduledFuture<?> renewal) {
		this.renewal = renewal;
		if (this.finished.get() && !this.asyncAbandoned) {
			renewal.cancel(false);
		}
	}

	void markLeaseLost() {
		this.leaseLost = true;
	}

	/** The handler's return value turned out to stream its body: never stored. */
	void markStreaming() {
		if (this.presetReason == NotStoredReason.NONE) {
			this.presetReason = NotStoredReason.STREAMING;
		}
	}

	/** The asynchronous request timed out or failed; its work may still be running. */
	void markAsyncAbandoned() {
		this.asyncAbandoned = true;
	}

	/** The Callable of an asynchronous handler starts running. */
	synchronized void taskStarted() {
		this.taskStarted = true;
		this.taskRunning = true;
	}

	/** The Callable of an asynchronous handler has returned or thrown. */
	void taskEnded() {
		boolean release;
		synchronized (this) {
			this.taskRunning = false;
			release = this.releaseWhenTaskEnds;
			this.releaseWhenTaskEnds = false;
		}
		if (release) {
			cancelRenewal();
			release(NotStoredReason.ASYNC_TIMEOUT);
		}
	}

	/**
	 * The handler called {@code sendError}: the container renders the body in an error
	 * dispatch, which {@link IdempotencyFilter} captures and stores.
	 */
	void awaitErrorPage() {
		this.awaitingErrorPage = true;
	}

	boolean isAwaitingErrorPage() {
		return this.awaitingErrorPage && !this.finished.get();
	}

	long maxResponseSize() {
		return this.settings.maxResponseSize();
	}

	/**
	 * Releases the key if the request ended without being finished (no error dispatch
	 * followed {@code sendError}, or the container gave up on an asynchronous request).
	 */
	void abandon() {
		if (!this.finished.get()) {
			end(null, this.awaitingErrorPage ? NotStoredReason.ERROR_PAGE : NotStoredReason.EXCEPTION);
		}
	}

	AsyncListener asyncListener() {
		return new AsyncListener() {

			@Override
			public void onComplete(AsyncEvent event) {
				// normally finished by the filter on the last async dispatch; this
				// catches
				// requests that ended without one (client gone, container error)
				abandon();
			}

			@Override
			public void onTimeout(AsyncEvent event) {
				markAsyncAbandoned();
			}

			@Override
			public void onError(AsyncEvent event) {
				markAsyncAbandoned();
			}

			@Override
			public void onStartAsync(AsyncEvent event) {
				event.getAsyncContext().addListener(this);
			}

		};
	}

	/**
	 * Stores the response or releases the key.
	 * @param response the captured response, {@code null} if the request failed
	 * @param failure the exception that escaped the handler, if any
	 */
	void finish(@Nullable CapturingResponse response, @Nullable Throwable failure) {
		end(response, (failure != null || response == null) ? NotStoredReason.EXCEPTION : NotStoredReason.NONE);
	}

	private void end(@Nullable CapturingResponse response, NotStoredReason failureReason) {
		if (!this.finished.compareAndSet(false, true)) {
			return;
		}
		if (this.asyncAbandoned) {
			endAbandoned();
			return;
		}
		cancelRenewal();
		NotStoredReason reason = (failureReason != NotStoredReason.NONE || response == null) ? failureReason
				: notStoredReason(response);
		if (reason != NotStoredReason.NONE) {
			release(reason);
			return;
		}
		if (this.leaseLost) {
			logger.warn("Idempotency lease was lost while the handler ran; its response is not stored");
			this.listener.onResponse(ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
			releaseQuietly();
			return;
		}
		CapturedResponse captured = response.captured(this.settings::isReplayable);
		try {
			StoredRecord record = new StoredRecord(this.fingerprint, ResponseEnvelope.encode(captured));
			if (this.store.complete(this.lease, record, this.ttl)) {
				this.listener.onResponse(ResponseOutcome.STORED, NotStoredReason.NONE);
			}
			else {
				logger.warn("Idempotency lease was lost before the response could be stored; it is not stored");
				this.listener.onResponse(ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
				releaseQuietly();
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not store an idempotent response; a retry will run the handler again", ex);
			this.listener.onResponse(ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
			releaseQuietly();
		}
	}

	/**
	 * The request timed out or failed while its work may go on: keep the key until the
	 * work ends. A Callable tells when it returns; a DeferredResult or CompletableFuture
	 * does not, so its claim is left to lapse one lock TTL later (leases stop being
	 * renewed; other stores release after that delay).
	 */
	private void endAbandoned() {
		synchronized (this) {
			if (this.taskRunning) {
				this.releaseWhenTaskEnds = true;
				return;
			}
		}
		cancelRenewal();
		if (this.taskStarted) {
			release(NotStoredReason.ASYNC_TIMEOUT);
		}
		else if (this.store.leaseExpires()) {
			this.listener.onResponse(ResponseOutcome.NOT_STORED, NotStoredReason.ASYNC_TIMEOUT);
		}
		else {
			this.leaseRenewer.schedule(() -> release(NotStoredReason.ASYNC_TIMEOUT), this.settings.lockTtl());
		}
	}

	private void cancelRenewal() {
		ScheduledFuture<?> renewal = this.renewal;
		if (renewal != null) {
			renewal.cancel(false);
		}
	}

	private NotStoredReason notStoredReason(CapturingResponse response) {
		if (this.presetReason != NotStoredReason.NONE) {
			return this.presetReason;
		}
		if (response.isErrorSent()) {
			return NotStoredReason.ERROR_PAGE;
		}
		if (response.isCaptureFailed()) {
			return NotStoredReason.NOT_CAPTURED;
		}
		if (response.isOverflowed()) {
			return NotStoredReason.TOO_LARGE;
		}
		if (!isStorable(response.getStatus())) {
			return NotStoredReason.STATUS;
		}
		return NotStoredReason.NONE;
	}

	static boolean isStorable(int status) {
		return status >= 200 && status < 500 && status != 408 && status != 425 && status != 429;
	}

	private void release(NotStoredReason reason) {
		try {
			if (this.store.release(this.lease)) {
				this.listener.onResponse(ResponseOutcome.NOT_STORED, reason);
			}
			else {
				this.listener.onResponse(ResponseOutcome.LOCK_LOST, reason);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release an idempotency key; it frees itself when its lock expires", ex);
			this.listener.onResponse(ResponseOutcome.STORE_ERROR, reason);
		}
	}

	/**
	 * Frees what a lost claim may have left behind; a no-op when another request owns the
	 * key.
	 */
	private void releaseQuietly() {
		try {
			this.store.release(this.lease);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not release an idempotency key", ex);
		}
	}

}
