package dev.idempo.core;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Shields the request flow from a failing {@link IdempotencyListener}.
 *
 * @author idempo
 */
final class SafeIdempotencyListener implements IdempotencyListener {

	private static final Log logger = LogFactory.getLog(SafeIdempotencyListener.class);

	private final IdempotencyListener delegate;

	SafeIdempotencyListener(IdempotencyListener delegate) {
		this.delegate = delegate;
	}

	static IdempotencyListener of(IdempotencyListener listener) {
		return (listener instanceof SafeIdempotencyListener) ? listener : new SafeIdempotencyListener(listener);
	}

	@Override
	public void onRequest(RequestOutcome outcome) {
		try {
			this.delegate.onRequest(outcome);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency listener failed", ex);
		}
	}

	@Override
	public void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
		try {
			this.delegate.onResponse(outcome, reason);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency listener failed", ex);
		}
	}

	@Override
	public void onRequest(Source source, RequestOutcome outcome) {
		try {
			this.delegate.onRequest(source, outcome);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency listener failed", ex);
		}
	}

	@Override
	public void onResponse(Source source, ResponseOutcome outcome, NotStoredReason reason) {
		try {
			this.delegate.onResponse(source, outcome, reason);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency listener failed", ex);
		}
	}

	@Override
	public void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
		try {
			this.delegate.onStoreOperation(store, operation, nanos, success);
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency listener failed", ex);
		}
	}

}
