package dev.idempo.core;

import java.util.List;

/**
 * Passes every event to several listeners, each shielded from the others' failures.
 *
 * @author idempo
 */
public final class CompositeIdempotencyListener implements IdempotencyListener {

	private final List<IdempotencyListener> listeners;

	private CompositeIdempotencyListener(List<IdempotencyListener> listeners) {
		this.listeners = listeners.stream().map(SafeIdempotencyListener::of).toList();
	}

	/**
	 * A listener for all of {@code listeners}.
	 * @param listeners the listeners
	 * @return one listener
	 */
	public static IdempotencyListener of(List<IdempotencyListener> listeners) {
		if (listeners.isEmpty()) {
			return NONE;
		}
		if (listeners.size() == 1) {
			return SafeIdempotencyListener.of(listeners.get(0));
		}
		return new CompositeIdempotencyListener(listeners);
	}

	@Override
	public void onRequest(RequestOutcome outcome) {
		this.listeners.forEach((listener) -> listener.onRequest(outcome));
	}

	@Override
	public void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
		this.listeners.forEach((listener) -> listener.onResponse(outcome, reason));
	}

	@Override
	public void onRequest(Source source, RequestOutcome outcome) {
		this.listeners.forEach((listener) -> listener.onRequest(source, outcome));
	}

	@Override
	public void onResponse(Source source, ResponseOutcome outcome, NotStoredReason reason) {
		this.listeners.forEach((listener) -> listener.onResponse(source, outcome, reason));
	}

	@Override
	public void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
		this.listeners.forEach((listener) -> listener.onStoreOperation(store, operation, nanos, success));
	}

}
