package dev.idempo.chaos;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import dev.idempo.chaos.History.Answer;
import dev.idempo.chaos.History.Execution;
import dev.idempo.chaos.History.Kill;
import dev.idempo.chaos.History.StoreRestart;

/**
 * Judges a chaos run's {@link History} against the contract, counting durable effects
 * (handler executions) per key. It fails the run on:
 * <ul>
 * <li><b>an unexplained double execution</b>: a key whose handler ran more than once,
 * where some earlier execution was not wiped out by a fault before the later one began
 * (below);</li>
 * <li><b>any second execution of a transactional key</b>: its effect and its record
 * commit together, so no fault explains one;</li>
 * <li><b>a replay that differs from its execution</b> ({@code Idempotent-Replayed:
 * true}): its status, any header the handler set, or a byte of its body differs from what
 * the execution it names ({@value History#EXECUTION_HEADER}) recorded durably; the same
 * check holds for first-hand answers, and an execution has at most one first-hand
 * answer;</li>
 * <li><b>any 5xx answer</b> that reached the client as final (503 is retried and never
 * final; a 500 always is), and any answer that no execution produced: a 4xx of idempo
 * (400, 422) or an execution with no durable effect;</li>
 * <li><b>a key the client gave up on</b> (no answer before its deadline).</li>
 * </ul>
 * <b>When a later execution E2 of a key is explained by an earlier one, E1.</b> The store
 * must have forgotten E1, its record and its claim, by the time E2 claimed the key. E2 is
 * explained only if, for every earlier execution E1 of the key (by start time), one of
 * these holds; each is a necessary condition of its fault, so a run never fails for a
 * fault it did inject:
 * <ol>
 * <li><b>Killed before storing</b>: the incarnation that ran E1 was SIGKILLed after E1
 * began and before E2 began, the instance never reported E1's response stored (no
 * {@code IdempotencyListener} marker at all), and no client ever received a replay of E1
 * (which would prove it stored). The documented window: a lock-based store cannot commit
 * a handler's effect and its record together.</li>
 * <li><b>Record lost with a restart</b> (stores whose records do not survive a restart: a
 * Redis that keeps nothing on disk): a restart began before E2 began, and E1 reached its
 * instance before that restart was over (so its claim or record was on the server that
 * lost everything).</li>
 * <li><b>Lock lost with a restart</b> (stores whose records survive, PostgreSQL and
 * MariaDB): E1 was not stored (its marker is anything but {@code STORED}, or there is
 * none), a restart began before E2 began, and E1 was in flight during the restart: it
 * reached its instance before the server was back and its marker came after the stop
 * began (or never). The lock session died with the server, and E1's store found its claim
 * gone.</li>
 * <li><b>Lease expired</b> (stores whose claims are leases): E1's marker is
 * {@code LOCK_LOST} and E2 began at least one lease after E1 reached its instance, the
 * earliest a lease taken for E1 can have run out (a caveat the README documents for
 * pauses longer than {@code idempo.lock-ttl}).</li>
 * </ol>
 * Nothing else explains a double execution: not a kill after the instance reported E1
 * stored, not a restart of a SQL store after E1 was stored, not a transactional key. The
 * one window the conditions cannot close is a kill between the store's write and the
 * marker's (microseconds on the request thread), where rule 1 would excuse a second
 * execution that the stored record should have prevented; a client's replay of E1 closes
 * it whenever one was seen.
 *
 * @author idempo
 */
final class HistoryChecker {

	private static final int SHOWN_BODY = 300;

	private HistoryChecker() {
	}

	/** Why a double execution is allowed, as in the class description. */
	enum Explanation {

		/**
		 * Rule 1: the instance running the earlier execution was killed before storing.
		 */
		KILLED_BEFORE_STORED,

		/** Rule 2: the store lost every record and claim with a restart. */
		RECORD_LOST_WITH_RESTART,

		/** Rule 3: the earlier execution lost its lock session with a restart. */
		LOCK_LOST_WITH_RESTART,

		/** Rule 4: the earlier execution's lease expired. */
		LEASE_EXPIRED

	}

	/**
	 * Checks a history.
	 * @param history the history
	 * @return what was wrong with it, and counts
	 */
	static Verdict check(History history) {
		List<String> violations = new ArrayList<>();
		Map<String, Execution> byId = new HashMap<>();
		Map<String, List<Execution>> byKey = new HashMap<>();
		for (Execution execution : history.executions()) {
			if (byId.putIfAbsent(execution.id(), execution) != null) {
				violations.add("execution id " + execution.id() + " recorded twice");
			}
			byKey.computeIfAbsent(execution.key(), (key) -> new ArrayList<>()).add(execution);
			if (!history.keys().containsKey(execution.key())) {
				violations.add("execution " + describe(execution) + " of a key the client never sent");
			}
			if (!execution.transactional() && execution.receivedNanos() > execution.startNanos()) {
				violations.add("execution " + describe(execution) + " began before its request arrived:"
						+ " the instances' clocks do not compare");
			}
		}
		Set<String> replayed = new HashSet<>();
		Map<String, Integer> firstHand = new HashMap<>();
		Set<String> answeredKeys = new HashSet<>();
		int replays = 0;
		for (Answer answer : history.answers()) {
			answeredKeys.add(answer.key());
			String violation = checkAnswer(answer, byId);
			if (violation != null) {
				violations.add(violation);
				continue;
			}
			String id = answer.execution();
			if (answer.replayed()) {
				replays++;
				replayed.add(id);
			}
			else if (firstHand.merge(id, 1, Integer::sum) == 2) {
				violations.add("execution " + describe(byId.get(id)) + " answered first-hand more than once");
			}
		}
		Map<Explanation, Integer> explained = new EnumMap<>(Explanation.class);
		for (Map.Entry<String, List<Execution>> entry : byKey.entrySet()) {
			List<Execution> executions = entry.getValue();
			executions.sort(Comparator.comparingLong(Execution::startNanos).thenComparing(Execution::id));
			if (executions.size() < 2) {
				continue;
			}
			if (Boolean.TRUE.equals(history.keys().get(entry.getKey()))
					|| executions.stream().anyMatch(Execution::transactional)) {
				violations.add("transactional key " + entry.getKey() + " ran " + executions.size()
						+ " times, which no fault explains: " + describeAll(executions));
				continue;
			}
			for (int later = 1; later < executions.size(); later++) {
				Explanation last = null;
				for (int earlier = 0; earlier < later; earlier++) {
					last = explain(history, executions.get(earlier), executions.get(later), replayed);
					if (last == null) {
						violations.add("unexplained double execution of key " + entry.getKey() + ": "
								+ describe(executions.get(later)) + " after " + describe(executions.get(earlier))
								+ "; all executions: " + describeAll(executions));
						break;
					}
				}
				if (last == null) {
					break;
				}
				explained.merge(last, 1, Integer::sum);
			}
		}
		for (String key : history.keys().keySet()) {
			if (!answeredKeys.contains(key)) {
				violations.add("key " + key + " was never answered");
			}
		}
		history.gaveUp().forEach((reason) -> violations.add("the client gave up: " + reason));
		long transactionalKeys = history.keys().values().stream().filter(Boolean::booleanValue).count();
		return new Verdict(history.store(), violations, explained, history.keys().size(), (int) transactionalKeys,
				history.executions().size(), history.answers().size(), replays, history.kills().size(),
				history.restarts().size(), history.traffic(), notStored(history));
	}

	/**
	 * Whether {@code later} may run although {@code earlier} ran, and why.
	 * @return the explanation, {@code null} if there is none
	 */
	private static @Nullable Explanation explain(History history, Execution earlier, Execution later,
			Set<String> replayed) {
		long began = later.startNanos();
		if (earlier.marker() == null && !replayed.contains(earlier.id())) {
			for (Kill kill : history.kills()) {
				if (kill.incarnation().equals(earlier.incarnation()) && kill.nanos() > earlier.startNanos()
						&& kill.nanos() < began) {
					return Explanation.KILLED_BEFORE_STORED;
				}
			}
		}
		for (StoreRestart restart : history.restarts()) {
			if (restart.stopNanos() >= began || earlier.receivedNanos() >= restart.upNanos()) {
				continue;
			}
			if (!history.semantics().recordsSurviveRestart()) {
				return Explanation.RECORD_LOST_WITH_RESTART;
			}
			if (!earlier.stored() && (earlier.marker() == null || earlier.marker().nanos() > restart.stopNanos())) {
				return Explanation.LOCK_LOST_WITH_RESTART;
			}
		}
		Duration lease = history.semantics().leaseTtl();
		if (lease != null && earlier.marker() != null && earlier.marker().outcome().equals("LOCK_LOST")
				&& began - earlier.receivedNanos() >= lease.toNanos()) {
			return Explanation.LEASE_EXPIRED;
		}
		return null;
	}

	/**
	 * What is wrong with one final answer.
	 * @return the violation, {@code null} if the answer is one its execution produced
	 */
	private static @Nullable String checkAnswer(Answer answer, Map<String, Execution> byId) {
		String kind = answer.replayed() ? "replay" : "first-hand answer";
		if (answer.status() >= 500) {
			return "key " + answer.key() + " answered " + answer.status() + ": " + shown(answer.body());
		}
		String id = answer.execution();
		if (id == null) {
			return "key " + answer.key() + " answered " + answer.status() + " without an execution: "
					+ shown(answer.body());
		}
		Execution execution = byId.get(id);
		if (execution == null || !execution.key().equals(answer.key())) {
			return "key " + answer.key() + " got a " + kind + " of execution " + id
					+ ", which has no durable effect for that key";
		}
		if (answer.status() != execution.status()) {
			return kind + " of " + describe(execution) + " has status " + answer.status() + ", the execution's is "
					+ execution.status();
		}
		for (Map.Entry<String, String> header : execution.headers().entrySet()) {
			String value = answer.headers().get(header.getKey());
			if (!header.getValue().equals(value)) {
				return kind + " of " + describe(execution) + " has " + header.getKey() + ": " + value
						+ ", the execution set " + header.getValue();
			}
		}
		int differs = Arrays.mismatch(answer.body(), execution.body());
		if (differs >= 0) {
			return kind + " of " + describe(execution) + " differs from the execution's body at byte " + differs + " ("
					+ answer.body().length + " bytes, the execution's " + execution.body().length + "): "
					+ shown(answer.body());
		}
		return null;
	}

	private static Map<String, Integer> notStored(History history) {
		Map<String, Integer> outcomes = new HashMap<>();
		for (Execution execution : history.executions()) {
			if (!execution.transactional()) {
				String outcome = (execution.marker() != null) ? execution.marker().outcome() : "NO_MARKER";
				if (!outcome.equals("STORED")) {
					outcomes.merge(outcome, 1, Integer::sum);
				}
			}
		}
		return outcomes;
	}

	private static String describe(@Nullable Execution execution) {
		if (execution == null) {
			return "(none)";
		}
		if (execution.transactional()) {
			return execution.id() + " on " + execution.incarnation();
		}
		return execution.id() + " on " + execution.incarnation() + " (received at " + execution.receivedNanos()
				+ ", began at " + execution.startNanos() + ", " + ((execution.marker() != null)
						? execution.marker().outcome() + " at " + execution.marker().nanos() : "no marker")
				+ ")";
	}

	private static String describeAll(List<Execution> executions) {
		return executions.stream().map(HistoryChecker::describe).collect(Collectors.joining("; ", "[", "]"));
	}

	private static String shown(byte[] body) {
		String text = new String(body, StandardCharsets.UTF_8);
		return (text.length() > SHOWN_BODY) ? text.substring(0, SHOWN_BODY) + "..." : text;
	}

	/**
	 * The outcome of a check.
	 *
	 * @param store the store's name
	 * @param violations what the contract does not allow, empty if nothing
	 * @param explained the double executions that faults explain, by explanation
	 * @param keys keys sent
	 * @param transactionalKeys of which to the transactional endpoint
	 * @param executions handler executions
	 * @param answers final answers
	 * @param replays of which replays
	 * @param kills SIGKILLs
	 * @param restarts store restarts
	 * @param traffic the client's counts
	 * @param notStored non-transactional executions whose response was not stored, by
	 * marker outcome ({@code NO_MARKER} for those killed before the marker)
	 */
	record Verdict(String store, List<String> violations, Map<Explanation, Integer> explained, int keys,
			int transactionalKeys, int executions, int answers, int replays, int kills, int restarts,
			History.Traffic traffic, Map<String, Integer> notStored) {

		int explainedDoubles() {
			return this.explained.values().stream().mapToInt(Integer::intValue).sum();
		}

		/**
		 * One line of figures.
		 * @return the summary
		 */
		String summary() {
			return String.format(
					"chaos %s: %d keys (%d transactional), %d requests, %d executions, %d explained double executions %s,"
							+ " %d kills, %d store restarts, %d answers 409, %d answers 503, %d connection errors,"
							+ " %d final answers of which %d replays, responses not stored %s, %d violations",
					this.store, this.keys, this.transactionalKeys, this.traffic.requests(), this.executions,
					explainedDoubles(), this.explained, this.kills, this.restarts, this.traffic.conflicts(),
					this.traffic.unavailable(), this.traffic.connectionErrors(), this.answers, this.replays,
					this.notStored, this.violations.size());
		}

	}

}
