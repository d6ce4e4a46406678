package dev.idempo.chaos;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import dev.idempo.chaos.History.Answer;
import dev.idempo.chaos.History.Execution;
import dev.idempo.chaos.History.Kill;
import dev.idempo.chaos.History.Marker;
import dev.idempo.chaos.History.Semantics;
import dev.idempo.chaos.History.StoreRestart;
import dev.idempo.chaos.HistoryChecker.Explanation;
import dev.idempo.chaos.HistoryChecker.Verdict;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chaos test's checker on hand-made histories: it passes a clean run, explains the
 * double executions that the documented faults allow, and fails on every kind of
 * violation it exists to find (a double execution no fault explains, a replay that
 * differs by one byte, a header or a status, a 500, an answer no execution produced, a
 * transactional key run twice even across a kill). Times are plain numbers here, in
 * milliseconds for readability.
 *
 * @author idempo
 */
class HistoryCheckerTests {

	private static final Semantics REDIS = new Semantics(false, Duration.ofNanos(3_000));

	private static final Semantics SQL = new Semantics(true, null);

	@Test
	void aCleanHistoryPasses() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 30);
		run.answer(first, false, 40);
		run.answer(first, true, 50);
		Verdict verdict = run.check();
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.replays()).isEqualTo(1);
		assertThat(verdict.explainedDoubles()).isZero();
		assertThat(verdict.summary()).contains("1 keys", "1 executions", "0 violations");
	}

	@Test
	void aDoubleExecutionWithoutAFaultFails() {
		Run run = new Run(REDIS).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 30);
		Execution second = run.execution("k", "e2", "b#1", 100, "STORED", 120);
		run.answer(first, false, 40);
		run.answer(second, false, 130);
		assertThat(run.check().violations()).singleElement()
			.asString()
			.startsWith("unexplained double execution of key k: e2 on b#1");
	}

	@Test
	void twoExecutionsRunningAtOnceWithoutAFaultFail() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 50);
		Execution second = run.execution("k", "e2", "b#1", 20, "STORED", 60);
		run.answer(first, false, 55);
		run.answer(second, false, 65);
		assertThat(run.check().violations()).singleElement().asString().contains("unexplained double execution");
	}

	@Test
	void aKillBeforeTheResponseWasStoredExplainsTheSecondExecution() {
		Run run = new Run(SQL).key("k");
		run.execution("k", "e1", "a#1", 10, null, 0);
		run.kill("a#1", 20);
		Execution second = run.execution("k", "e2", "b#1", 30, "STORED", 40);
		run.answer(second, false, 45);
		run.answer(second, true, 50);
		Verdict verdict = run.check();
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.explained()).containsExactly(Map.entry(Explanation.KILLED_BEFORE_STORED, 1));
	}

	@Test
	void aKillAfterTheInstanceReportedTheResponseStoredExplainsNothing() {
		Run run = new Run(SQL).key("k");
		run.execution("k", "e1", "a#1", 10, "STORED", 15);
		run.kill("a#1", 20);
		Execution second = run.execution("k", "e2", "b#1", 30, "STORED", 40);
		run.answer(second, false, 45);
		assertThat(run.check().violations()).singleElement().asString().contains("unexplained double execution");
	}

	@Test
	void aKillAfterAReplayOfTheFirstExecutionExplainsNothing() {
		Run run = new Run(REDIS).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, null, 0);
		run.answer(first, true, 15);
		run.kill("a#1", 20);
		Execution second = run.execution("k", "e2", "b#1", 30, "STORED", 40);
		run.answer(second, false, 45);
		assertThat(run.check().violations()).singleElement().asString().contains("unexplained double execution");
	}

	@Test
	void aKillOfTheFirstInstanceAfterTheSecondExecutionBeganExplainsNothing() {
		Run run = new Run(SQL).key("k");
		run.execution("k", "e1", "a#1", 10, null, 0);
		Execution second = run.execution("k", "e2", "b#1", 15, "STORED", 40);
		run.kill("a#1", 20);
		run.answer(second, false, 45);
		assertThat(run.check().violations()).singleElement().asString().contains("unexplained double execution");
	}

	@Test
	void aRedisRestartExplainsARunAfterItEvenOfAStoredResponse() {
		Run run = new Run(REDIS).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 20);
		run.answer(first, false, 25);
		run.restart(30, 35);
		Execution second = run.execution("k", "e2", "b#1", 40, "STORED", 50);
		run.answer(second, false, 55);
		Verdict verdict = run.check();
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.explained()).containsExactly(Map.entry(Explanation.RECORD_LOST_WITH_RESTART, 1));
	}

	@Test
	void aRestartOfASqlStoreAfterTheResponseWasStoredExplainsNothing() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 20);
		run.answer(first, false, 25);
		run.restart(30, 35);
		Execution second = run.execution("k", "e2", "b#1", 40, "STORED", 50);
		run.answer(second, false, 55);
		assertThat(run.check().violations()).singleElement().asString().contains("unexplained double execution");
	}

	@Test
	void aRestartOfASqlStoreWhileTheFirstExecutionRanExplainsTheSecond() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "LOCK_LOST", 40);
		run.restart(20, 30);
		Execution second = run.execution("k", "e2", "b#1", 32, "STORED", 45);
		run.answer(first, false, 41);
		run.answer(second, false, 46);
		run.answer(second, true, 60);
		Verdict verdict = run.check();
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.explained()).containsExactly(Map.entry(Explanation.LOCK_LOST_WITH_RESTART, 1));
		assertThat(verdict.notStored()).containsExactly(Map.entry("LOCK_LOST", 1));
	}

	@Test
	void aRestartOfASqlStoreAfterTheFirstExecutionEndedExplainsNothingEvenIfItWasNotStored() {
		Run run = new Run(SQL).key("k");
		run.execution("k", "e1", "a#1", 10, "STORE_ERROR", 15);
		run.restart(20, 30);
		Execution second = run.execution("k", "e2", "b#1", 32, "STORED", 45);
		run.answer(second, false, 46);
		assertThat(run.check().violations()).singleElement().asString().contains("unexplained double execution");
	}

	@Test
	void aLostLeaseExplainsARunOneLeaseLaterOnly() {
		Run explained = new Run(REDIS).key("k");
		explained.execution("k", "e1", "a#1", 10, "LOCK_LOST", 4_000);
		Execution late = explained.execution("k", "e2", "b#1", 3_100, "STORED", 3_200);
		explained.answer(late, false, 3_300);
		assertThat(explained.check().violations()).isEmpty();
		assertThat(explained.check().explained()).containsExactly(Map.entry(Explanation.LEASE_EXPIRED, 1));
		Run tooEarly = new Run(REDIS).key("k");
		tooEarly.execution("k", "e1", "a#1", 10, "LOCK_LOST", 4_000);
		Execution early = tooEarly.execution("k", "e2", "b#1", 2_000, "STORED", 2_100);
		tooEarly.answer(early, false, 2_200);
		assertThat(tooEarly.check().violations()).singleElement().asString().contains("unexplained double execution");
	}

	@Test
	void everyEarlierExecutionMustBeExplained() {
		Run run = new Run(SQL).key("k");
		run.execution("k", "e1", "a#1", 10, "STORED", 12);
		run.execution("k", "e2", "b#1", 20, null, 0);
		run.kill("b#1", 25);
		Execution third = run.execution("k", "e3", "c#1", 30, "STORED", 35);
		run.answer(third, false, 40);
		assertThat(run.check().violations()).singleElement()
			.asString()
			.contains("e2 on b#1")
			.contains("after e1 on a#1");
	}

	@Test
	void aTransactionalKeyRunTwiceFailsWhateverTheFaults() {
		Run run = new Run(SQL).transactionalKey("k");
		run.transactionalExecution("k", "e1", "a#1");
		run.kill("a#1", 20);
		run.restart(25, 30);
		Execution second = run.transactionalExecution("k", "e2", "b#1");
		run.answer(second, false, 50);
		assertThat(run.check().violations()).singleElement().asString().startsWith("transactional key k ran 2 times");
	}

	@Test
	void aReplayThatDiffersByOneByteFails() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 20);
		run.answer(first, false, 25);
		byte[] body = first.body().clone();
		body[body.length - 2] ^= 1;
		run.answer("k", true, first.status(), first.headers(), body, 30);
		assertThat(run.check().violations()).singleElement()
			.asString()
			.startsWith("replay of e1")
			.contains("differs from the execution's body at byte " + (body.length - 2));
	}

	@Test
	void aReplayWithAnotherBodyLengthFails() {
		Run run = new Run(REDIS).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 20);
		byte[] longer = (new String(first.body(), StandardCharsets.UTF_8) + " ").getBytes(StandardCharsets.UTF_8);
		run.answer("k", true, first.status(), first.headers(), longer, 30);
		assertThat(run.check().violations()).singleElement().asString().contains("differs from the execution's body");
	}

	@Test
	void aReplayWithAnotherHeaderValueOrStatusFails() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 20);
		Map<String, String> headers = new LinkedHashMap<>(first.headers());
		headers.put("x-chaos-tag", "other");
		run.answer("k", true, first.status(), headers, first.body(), 30);
		run.answer("k", true, 200, first.headers(), first.body(), 31);
		List<String> violations = run.check().violations();
		assertThat(violations).hasSize(2);
		assertThat(violations.get(0)).contains("has x-chaos-tag: other, the execution set tag-e1");
		assertThat(violations.get(1)).contains("has status 200, the execution's is 201");
	}

	@Test
	void aReplayWithoutAHeaderTheHandlerSetFails() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 20);
		Map<String, String> headers = new LinkedHashMap<>(first.headers());
		headers.remove("location");
		run.answer("k", true, first.status(), headers, first.body(), 30);
		assertThat(run.check().violations()).singleElement().asString().contains("has location: null");
	}

	@Test
	void a500Fails() {
		Run run = new Run(REDIS).key("k");
		run.answer("k", false, 500, Map.of("Content-Type", "application/json"),
				"{\"status\":500}".getBytes(StandardCharsets.UTF_8), 30);
		assertThat(run.check().violations()).singleElement()
			.asString()
			.isEqualTo("key k answered 500: {\"status\":500}");
	}

	@Test
	void anAnswerThatNoExecutionProducedFails() {
		Run run = new Run(SQL).key("k").key("other");
		Execution other = run.execution("other", "e9", "a#1", 10, "STORED", 20);
		run.answer(other, false, 25);
		run.answer("k", false, 422, Map.of(), "{\"type\":\"key-reused\"}".getBytes(StandardCharsets.UTF_8), 30);
		run.answer("k", true, other.status(), other.headers(), other.body(), 31);
		List<String> violations = run.check().violations();
		assertThat(violations).hasSize(2);
		assertThat(violations.get(0)).startsWith("key k answered 422 without an execution");
		assertThat(violations.get(1))
			.isEqualTo("key k got a replay of execution e9, which has no durable effect for that key");
	}

	@Test
	void aFirstHandAnswerOfOneExecutionTwiceFails() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 20);
		run.answer(first, false, 25);
		run.answer(first, false, 26);
		assertThat(run.check().violations()).singleElement().asString().contains("answered first-hand more than once");
	}

	@Test
	void aKeyTheClientGaveUpOnFails() {
		Run run = new Run(SQL).key("k");
		Execution first = run.execution("k", "e1", "a#1", 10, "STORED", 20);
		run.answer(first, false, 25);
		run.gaveUp("k: no answer before the deadline");
		assertThat(run.check().violations()).containsExactly("the client gave up: k: no answer before the deadline");
	}

	@Test
	void aKeyNeverAnsweredFails() {
		Run run = new Run(REDIS).key("k");
		run.execution("k", "e1", "a#1", 10, "STORED", 20);
		assertThat(run.check().violations()).containsExactly("key k was never answered");
	}

	/** A history under construction. */
	private static final class Run {

		private final Semantics semantics;

		private final Map<String, Boolean> keys = new LinkedHashMap<>();

		private final List<Execution> executions = new ArrayList<>();

		private final List<Answer> answers = new ArrayList<>();

		private final List<String> gaveUp = new ArrayList<>();

		private final List<Kill> kills = new ArrayList<>();

		private final List<StoreRestart> restarts = new ArrayList<>();

		Run(Semantics semantics) {
			this.semantics = semantics;
		}

		Run key(String key) {
			this.keys.put(key, false);
			return this;
		}

		Run transactionalKey(String key) {
			this.keys.put(key, true);
			return this;
		}

		Execution execution(String key, String id, String incarnation, long start, @Nullable String outcome,
				long markedAt) {
			Execution execution = new Execution(key, id, incarnation, false, start - 1, start, 201, headers(id),
					body(key, id), (outcome != null) ? new Marker(outcome, markedAt) : null);
			this.executions.add(execution);
			return execution;
		}

		Execution transactionalExecution(String key, String id, String incarnation) {
			Execution execution = new Execution(key, id, incarnation, true, 0, 0, 201, headers(id), body(key, id),
					null);
			this.executions.add(execution);
			return execution;
		}

		void answer(Execution execution, boolean replayed, long at) {
			answer(execution.key(), replayed, execution.status(), execution.headers(), execution.body(), at);
		}

		void answer(String key, boolean replayed, int status, Map<String, String> headers, byte[] body, long at) {
			Map<String, String> sent = new LinkedHashMap<>(headers);
			// what the container and filters add on the way, which the checker ignores
			sent.put("Date", "Mon, 23 Nov 2026 15:00:00 GMT");
			sent.put("Content-Length", String.valueOf(body.length));
			if (replayed) {
				sent.put("Idempotent-Replayed", "true");
			}
			this.answers.add(new Answer(key, at - 1, at, status, sent, body));
		}

		void kill(String incarnation, long at) {
			this.kills.add(new Kill(incarnation, at));
		}

		void restart(long stop, long up) {
			this.restarts.add(new StoreRestart(stop, up));
		}

		void gaveUp(String reason) {
			this.gaveUp.add(reason);
		}

		Verdict check() {
			return HistoryChecker.check(new History("test", this.semantics, this.keys, this.executions, this.answers,
					this.gaveUp, this.kills, this.restarts, new History.Traffic(this.answers.size(), 0, 0, 0)));
		}

		private static Map<String, String> headers(String id) {
			Map<String, String> headers = new LinkedHashMap<>();
			headers.put("Content-Type", "application/json");
			headers.put("X-Chaos-Execution", id);
			headers.put("X-Chaos-Tag", "tag-" + id);
			headers.put("Location", "/chaos/effects/" + id);
			return headers;
		}

		private static byte[] body(String key, String id) {
			return ("{\"key\":\"" + key + "\",\"execution\":\"" + id + "\",\"padding\":\"abcabcabc\"}")
				.getBytes(StandardCharsets.UTF_8);
		}

	}

}
