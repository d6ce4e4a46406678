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
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.StoredRecord;

/**
 * One handler execution under a claimed key, kept as a request attribute from the
 * interceptor's claim to the filter's finish. It is finished exactly once: stored and
 * released, or only released.
 *
 * @author idempo
 */
final class IdempotentExecution {

	static final String ATTRIBUTE = IdempotentExecution.class.getName();

	private static final Log logger = LogFactory.getLog(IdempotentExecution.class);

	private final LockingStore store;

	private final IdempotencyListener listener;

	private final IdempotencySettings settings;

	private final Lease lease;

	private final String fingerprint;

	private final Duration ttl;

	private final NotStoredReason presetReason;

	private final AtomicBoolean finished = new AtomicBoolean();

	private volatile boolean leaseLost;

	private volatile boolean awaitingErrorPage;

	private volatile @Nullable ScheduledFuture<?> renewal;

	IdempotentExecution(LockingStore store, IdempotencyListener listener, IdempotencySettings settings, Lease lease,
			String fingerprint, Duration ttl, NotStoredReason presetReason) {
		this.store = store;
		this.listener = listener;
		this.settings = settings;
		this.lease = lease;
		this.fingerprint = fingerprint;
		this.ttl = ttl;
		this.presetReason = presetReason;
	}

	static @Nullable IdempotentExecution of(ServletRequest request) {
		return (IdempotentExecution) request.getAttribute(ATTRIBUTE);
	}

	Lease lease() {
		return this.lease;
	}

	void renewWith(ScheduledFuture<?> renewal) {
		this.renewal = renewal;
		if (this.finished.get()) {
			renewal.cancel(false);
		}
	}

	void markLeaseLost() {
		this.leaseLost = true;
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
			}

			@Override
			public void onError(AsyncEvent event) {
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
		ScheduledFuture<?> renewal = this.renewal;
		if (renewal != null) {
			renewal.cancel(false);
		}
		NotStoredReason reason = (failureReason != NotStoredReason.NONE) ? failureReason : notStoredReason(response);
		if (reason != NotStoredReason.NONE) {
			release(reason);
			return;
		}
		if (this.leaseLost) {
			logger.warn("Idempotency lease was lost while the handler ran; its response is not stored");
			this.listener.onResponse(ResponseOutcome.LOCK_LOST, NotStoredReason.NONE);
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
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not store an idempotent response; a retry will run the handler again", ex);
			this.listener.onResponse(ResponseOutcome.STORE_ERROR, NotStoredReason.NONE);
			releaseQuietly();
		}
	}

	private NotStoredReason notStoredReason(CapturingResponse response) {
		if (this.presetReason != NotStoredReason.NONE) {
			return this.presetReason;
		}
		if (response.isErrorSent()) {
			return NotStoredReason.ERROR_PAGE;
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

	private void releaseQuietly() {
		try {
			this.store.release(this.lease);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not release an idempotency key after a failed store", ex);
		}
	}

}
