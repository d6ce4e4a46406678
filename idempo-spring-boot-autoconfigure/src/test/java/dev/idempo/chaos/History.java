package dev.idempo.chaos;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Everything one chaos run saw, for {@link HistoryChecker}: the durable record of every
 * handler execution, every final answer the client got, the faults the test injected, and
 * what the store keeps across a restart. Times are {@link System#nanoTime()} values,
 * taken in several JVMs of one Linux machine, where they all read the system-wide
 * {@code CLOCK_MONOTONIC} and so compare.
 *
 * @param store the store's name, for messages
 * @param semantics what the store keeps across faults
 * @param keys every key the client sent, and whether its endpoint is transactional
 * @param executions every handler execution, from the durable effects
 * @param answers every final answer (not 409, not 503) the client received
 * @param gaveUp keys whose requests ended without an answer, with the reason
 * @param kills every SIGKILL of an instance
 * @param restarts every restart of the store
 * @param traffic counts of what the client retried on
 * @author idempo
 */
record History(String store, Semantics semantics, Map<String, Boolean> keys, List<Execution> executions,
		List<Answer> answers, List<String> gaveUp, List<Kill> kills, List<StoreRestart> restarts, Traffic traffic) {

	/** The response header that names the execution that produced a response. */
	static final String EXECUTION_HEADER = "x-chaos-execution";

	/** The response header idempo adds to replays. */
	static final String REPLAYED_HEADER = "idempotent-replayed";

	History {
		keys = Map.copyOf(keys);
		executions = List.copyOf(executions);
		answers = List.copyOf(answers);
		gaveUp = List.copyOf(gaveUp);
		kills = List.copyOf(kills);
		restarts = List.copyOf(restarts);
	}

	/**
	 * What a store keeps across a restart, and how its claims end.
	 *
	 * @param recordsSurviveRestart whether stored responses survive a restart of the
	 * store (the SQL tables; not a Redis that keeps nothing on disk)
	 * @param leaseTtl the length of a claim's lease if claims are leases that expire
	 * (Redis), {@code null} if they are locks that live as long as their session
	 */
	record Semantics(boolean recordsSurviveRestart, @Nullable Duration leaseTtl) {
	}

	/**
	 * One run of a handler, as its durable effect recorded it.
	 *
	 * @param key the idempotency key
	 * @param id the execution id, a UUID the handler drew
	 * @param incarnation the instance incarnation that ran it ({@code a#2})
	 * @param transactional whether the effect committed in the store's transaction
	 * @param receivedNanos when the request reached the instance (before its claim)
	 * @param startNanos when the handler began
	 * @param status the status the handler returned
	 * @param headers the headers the handler set, names in lower case
	 * @param body the exact body the handler returned
	 * @param marker what became of the response, if the instance said so before it died
	 */
	record Execution(String key, String id, String incarnation, boolean transactional, long receivedNanos,
			long startNanos, int status, Map<String, String> headers, byte[] body, @Nullable Marker marker) {

		Execution {
			headers = lowerCase(headers);
		}

		/**
		 * Whether the instance saw its response stored.
		 * @return whether it did
		 */
		boolean stored() {
			return this.marker != null && this.marker.outcome().equals("STORED");
		}

	}

	/**
	 * What idempo told the application about an execution's response after trying to
	 * store it ({@code IdempotencyListener.onResponse}).
	 *
	 * @param outcome {@code STORED}, {@code LOCK_LOST}, {@code STORE_ERROR} or
	 * {@code NOT_STORED}
	 * @param nanos when
	 */
	record Marker(String outcome, long nanos) {
	}

	/**
	 * A final answer the client received.
	 *
	 * @param key the idempotency key it was sent with
	 * @param sentNanos when the request left
	 * @param receivedNanos when the answer arrived
	 * @param status its status
	 * @param headers its headers, names in lower case, first value of each
	 * @param body its body
	 */
	record Answer(String key, long sentNanos, long receivedNanos, int status, Map<String, String> headers,
			byte[] body) {

		Answer {
			headers = lowerCase(headers);
		}

		boolean replayed() {
			return "true".equals(this.headers.get(REPLAYED_HEADER));
		}

		@Nullable String execution() {
			return this.headers.get(EXECUTION_HEADER);
		}

	}

	/**
	 * A SIGKILL.
	 *
	 * @param incarnation the incarnation killed
	 * @param nanos just before the signal was sent
	 */
	record Kill(String incarnation, long nanos) {
	}

	/**
	 * A restart of the store.
	 *
	 * @param stopNanos just before the stop began
	 * @param upNanos once the server answered again
	 */
	record StoreRestart(long stopNanos, long upNanos) {
	}

	/**
	 * Counts of the client's attempts.
	 *
	 * @param requests every request sent
	 * @param conflicts answers 409, retried
	 * @param unavailable answers 503, retried
	 * @param connectionErrors requests without an answer (refused, cut, timed out),
	 * retried
	 */
	record Traffic(int requests, int conflicts, int unavailable, int connectionErrors) {
	}

	private static Map<String, String> lowerCase(Map<String, String> headers) {
		Map<String, String> lower = new LinkedHashMap<>();
		headers.forEach((name, value) -> lower.put(name.toLowerCase(Locale.ROOT), value));
		return Collections.unmodifiableMap(lower);
	}

}
