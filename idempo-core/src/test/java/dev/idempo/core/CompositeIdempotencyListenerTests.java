package dev.idempo.core;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.RequestOutcome;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.core.IdempotencyListener.StoreOperation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * {@link CompositeIdempotencyListener} and the {@link SafeIdempotencyListener} each
 * listener is wrapped in: every listener hears every event, and a failing one neither
 * fails the request nor silences the others.
 *
 * @author idempo
 */
class CompositeIdempotencyListenerTests {

	@Test
	void everyListenerHearsEveryEventInOrder() {
		List<String> heard = new ArrayList<>();
		IdempotencyListener listener = CompositeIdempotencyListener
			.of(List.of(recording("a", heard), recording("b", heard)));
		listener.onRequest(Source.WEB, RequestOutcome.EXECUTED);
		listener.onResponse(Source.METHOD, ResponseOutcome.NOT_STORED, NotStoredReason.STATUS);
		listener.onStoreOperation("memory", StoreOperation.CLAIM, 5, true);
		assertThat(heard).containsExactly("a request web executed", "b request web executed",
				"a response method not_stored status", "b response method not_stored status",
				"a store memory claim true", "b store memory claim true");
	}

	@Test
	void aFailingListenerDoesNotSilenceTheOthersNorFailTheCaller() {
		List<String> heard = new ArrayList<>();
		IdempotencyListener failing = new IdempotencyListener() {

			@Override
			public void onRequest(Source source, RequestOutcome outcome) {
				throw new IllegalStateException("broken listener");
			}

			@Override
			public void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
				throw new IllegalStateException("broken listener");
			}

		};
		IdempotencyListener listener = CompositeIdempotencyListener.of(List.of(failing, recording("b", heard)));
		assertThatNoException().isThrownBy(() -> {
			listener.onRequest(Source.WEB, RequestOutcome.REPLAYED);
			listener.onStoreOperation("redis", StoreOperation.COMPLETE, 1, false);
		});
		assertThat(heard).containsExactly("b request web replayed", "b store redis complete false");
	}

	@Test
	void noListenersIsTheSilentListenerAndOneIsOnlyMadeSafe() {
		assertThat(CompositeIdempotencyListener.of(List.of())).isSameAs(IdempotencyListener.NONE);
		IdempotencyListener failing = new IdempotencyListener() {

			@Override
			public void onRequest(Source source, RequestOutcome outcome) {
				throw new IllegalStateException("broken listener");
			}

		};
		IdempotencyListener single = CompositeIdempotencyListener.of(List.of(failing));
		assertThat(single).isNotInstanceOf(CompositeIdempotencyListener.class);
		assertThatNoException().isThrownBy(() -> single.onRequest(Source.WEB, RequestOutcome.EXECUTED));
		assertThat(SafeIdempotencyListener.of(single)).as("not wrapped twice").isSameAs(single);
	}

	private static IdempotencyListener recording(String name, List<String> heard) {
		return new IdempotencyListener() {

			@Override
			public void onRequest(Source source, RequestOutcome outcome) {
				heard.add(name + " request " + source.tag() + " " + outcome.tag());
			}

			@Override
			public void onResponse(Source source, ResponseOutcome outcome, NotStoredReason reason) {
				heard.add(name + " response " + source.tag() + " " + outcome.tag() + " " + reason.tag());
			}

			@Override
			public void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
				heard.add(name + " store " + store + " " + operation.tag() + " " + success);
			}

		};
	}

}
