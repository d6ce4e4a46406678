package dev.idempo.web.hostile;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import dev.idempo.store.LockingStore;
import dev.idempo.store.RecordState;
import dev.idempo.web.DefaultCallerScopeResolver;
import dev.idempo.web.RequestFingerprint;
import dev.idempo.web.hostile.HostileCase.Abandoned;
import dev.idempo.web.hostile.HostileCase.AbandonedAfterHandler;
import dev.idempo.web.hostile.HostileCase.Executes;
import dev.idempo.web.hostile.HostileCase.Expected;
import dev.idempo.web.hostile.HostileCase.Problem;
import dev.idempo.web.hostile.HostileCase.Refused;
import dev.idempo.web.hostile.HostileCase.Refuser;
import dev.idempo.web.hostile.HostileCase.RejectedBeforeHandler;
import dev.idempo.web.hostile.HostileCase.Replays;
import dev.idempo.web.hostile.RawExchange.Ending;
import dev.idempo.web.hostile.RawExchange.RawResponse;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

/**
 * Hostile keys and bodies, sent byte for byte over plain sockets to a real server, on
 * each store (a subclass per store). Case by case (see {@link HostileCases}) it proves:
 * <ul>
 * <li>every hostile request is answered with a 4xx, never a 5xx: idempo's own problem
 * ({@code application/problem+json} with the documented type) where idempo decides, else
 * the 4xx of Tomcat, Spring Security or Spring MVC for what never reaches idempo, each
 * asserted exactly;</li>
 * <li>every request is answered, or its connection closed, within Tomcat's connection
 * timeout (here {@value #CONNECTION_TIMEOUT_PROPERTY}) plus a margin, bodies that never
 * arrive in full included: a hang fails its case instead of blocking the build;</li>
 * <li>a refused request runs no handler and leaves the store as it was: the records it
 * holds, counted in the store itself by the subclass (the in-memory count, a {@code SCAN}
 * of the test's Redis prefix, {@code count(*)} of the test's SQL table), do not change,
 * and no claim is left behind; a body that never arrived leaves its key free for the
 * complete request;</li>
 * <li>a valid but tricky key (glob, Lua and SQL metacharacters, quotes, escapes, the
 * maximum length, another caller) runs the handler once, is stored under exactly the key
 * the contract says, and is replayed byte for byte; keys that differ only in a
 * metacharacter ({@code abc}, {@code abc*}, {@code abc?}, {@code abc%}) never meet, and
 * the same key written differently (quoted, padded, with parameters, through the alias)
 * replays the same record;</li>
 * <li>victims stored before the hostile cases, under keys the hostile ones are built
 * around, and every record stored on the way, replay byte for byte at the end, and the
 * store holds no other record.</li>
 * </ul>
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { HostileInputHttpTests.CONNECTION_TIMEOUT_PROPERTY, "idempo.max-request-size=1KB" })
public abstract class HostileInputHttpTests {

	/** A short container timeout, which is also Tomcat's read timeout for bodies. */
	static final String CONNECTION_TIMEOUT_PROPERTY = "server.tomcat.connection-timeout=1s";

	/** The timeout {@link #CONNECTION_TIMEOUT_PROPERTY} sets. */
	private static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(1);

	/** How much longer than the container's timeout an exchange may take. */
	private static final Duration MARGIN = Duration.ofSeconds(3);

	/** When an exchange counts as a hang. */
	private static final Duration DEADLINE = CONNECTION_TIMEOUT.plus(MARGIN);

	private static final List<String> ENDPOINTS = List.of("required", "orders", "form");

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@Autowired
	LockingStore store;

	/** Every record stored in this test, by storage key, in the order stored. */
	private final Map<String, Stored> stored = new LinkedHashMap<>();

	/**
	 * The storage keys of records stored for handlers that ran on a body then cut short,
	 * which no request replays.
	 */
	private final Set<String> incomplete = new HashSet<>();

	/**
	 * The completed records the store holds, expired or not, counted in the store itself.
	 * @return the number of records
	 */
	protected abstract long storedRecords();

	/**
	 * The claims the store holds, counted in the store itself.
	 * @return the number of claims, {@code -1} if the store cannot list them
	 */
	protected long heldClaims() {
		return -1;
	}

	@TestFactory
	Stream<DynamicTest> hostileInput() {
		List<HostileCase> cases = HostileCases.all();
		assertThat(cases).hasSizeGreaterThanOrEqualTo(100);
		Set<String> names = new HashSet<>();
		assertThat(cases).allSatisfy((hostile) -> assertThat(names.add(hostile.name())).as(hostile.name()).isTrue());
		assertStoreHoldsExactly(0, "start-up");
		for (String victim : HostileCases.VICTIMS) {
			executes("victim " + victim, "required", RawRequest.post(HostileCases.REQUIRED).key(victim).build(),
					new Executes(victim));
		}
		return Stream.concat(cases.stream().map((hostile) -> dynamicTest(hostile.name(), () -> run(hostile))),
				Stream.of(dynamicTest("afterwards: every record replays byte for byte, and there is no other",
						this::everyRecordReplays)));
	}

	private void run(HostileCase hostile) {
		Expected expected = hostile.expected();
		if (expected instanceof Executes executes) {
			executes(hostile.name(), hostile.endpoint(), hostile.request(), executes);
			return;
		}
		Map<String, Integer> runsBefore = runs();
		RawResponse response = exchange(hostile.request(), hostile.ending());
		String description = hostile.name() + ": " + response.describe();
		assertAnsweredInTime(response, description);
		if (expected instanceof RejectedBeforeHandler rejected) {
			rejectedBeforeHandler(hostile, rejected, response, description, runsBefore);
			return;
		}
		if (expected instanceof Problem problem) {
			assertProblem(response, problem, description);
		}
		else if (expected instanceof Refused refused) {
			assertRefused(response, refused, description);
		}
		else if (expected instanceof Replays replays) {
			Stored original = this.stored.get(storageKey(replays.key(), null));
			assertThat(original).as("%s: nothing stored under %s before", hostile.name(), replays.key()).isNotNull();
			assertReplayOf(response, original, description);
		}
		else if (expected instanceof Abandoned abandoned) {
			if (abandoned.status() > 0) {
				assertRefused(response, new Refused(abandoned.status(), Refuser.BODY), description);
			}
			else {
				assertThat(response.answered()).as("closed without an answer: " + description).isFalse();
			}
		}
		else if (expected instanceof AbandonedAfterHandler abandoned) {
			abandonedAfterHandler(hostile, abandoned, response, description, runsBefore);
			return;
		}
		assertThat(runs()).as("handler runs after " + description).isEqualTo(runsBefore);
		assertStoreHoldsExactly(records(), description);
		if (expected instanceof Abandoned abandoned) {
			assertThat(this.store.inspect(storageKey(abandoned.key(), null)).isAbsent()).as(description).isTrue();
			// the key is free: the complete request runs the handler
			executes(hostile.name() + ", then the complete request", hostile.endpoint(), abandoned.complete(),
					new Executes(abandoned.key()));
		}
	}

	/**
	 * A new key: the handler runs once, one record is stored under the key, and the same
	 * bytes again are replayed without running it.
	 */
	private void executes(String name, String endpoint, byte[] request, Executes expected) {
		String storageKey = storageKey(expected.key(), expected.authorization());
		assertThat(this.stored).as("%s: the case table stores %s twice", name, expected.key())
			.doesNotContainKey(storageKey);
		Map<String, Integer> runsBefore = runs();
		RawResponse first = exchange(request, Ending.KEEP_OPEN);
		String description = name + ": " + first.describe();
		assertAnsweredInTime(first, description);
		assertThat(first.status()).as(description).isEqualTo(expected.status());
		assertThat(first.header("Idempotent-Replayed")).as(description).isNull();
		Map<String, Integer> runsAfter = new LinkedHashMap<>(runsBefore);
		runsAfter.merge(endpoint, 1, Integer::sum);
		assertThat(runs()).as(description).isEqualTo(runsAfter);
		RecordState state = this.store.inspect(storageKey);
		assertThat(state.record()).as("%s: no record under the key %s", description, expected.key()).isNotNull();
		assertThat(state.inFlight()).as(description).isFalse();
		Stored record = new Stored(expected.key(), request, first.status(), first.body());
		RawResponse retry = exchange(request, Ending.KEEP_OPEN);
		assertReplayOf(retry, record, name + " (retry): " + retry.describe());
		assertThat(runs()).as(description).isEqualTo(runsAfter);
		this.stored.put(storageKey, record);
		assertStoreHoldsExactly(records(), description);
	}

	/**
	 * The handler ran once on a body that then ended short: the container's 4xx reached
	 * the client, a record of what the handler read holds the key, and the complete
	 * request replays it or gets 422 without running the handler again.
	 */
	private void abandonedAfterHandler(HostileCase hostile, AbandonedAfterHandler abandoned, RawResponse response,
			String description, Map<String, Integer> runsBefore) {
		assertRefused(response, new Refused(abandoned.status(), Refuser.BODY), description);
		Map<String, Integer> runsAfter = new LinkedHashMap<>(runsBefore);
		runsAfter.merge(hostile.endpoint(), 1, Integer::sum);
		assertThat(runs()).as("handler runs after " + description).isEqualTo(runsAfter);
		String storageKey = storageKey(abandoned.key(), null);
		assertThat(this.store.inspect(storageKey).record()).as(description).isNotNull();
		this.incomplete.add(storageKey);
		assertStoreHoldsExactly(records(), description);
		RawResponse complete = exchange(abandoned.complete(), Ending.KEEP_OPEN);
		String completeDescription = hostile.name() + ", then the complete request: " + complete.describe();
		assertAnsweredInTime(complete, completeDescription);
		if (abandoned.replays()) {
			assertThat(complete.status()).as(completeDescription).isEqualTo(200);
			assertThat(complete.header("Idempotent-Replayed")).as(completeDescription).isEqualTo("true");
		}
		else {
			assertProblem(complete, Problem.keyReused(), completeDescription);
		}
		assertThat(runs()).as(completeDescription).isEqualTo(runsAfter);
		assertStoreHoldsExactly(records(), completeDescription);
	}

	/** The records this test stored: those that replay, and those of bodies cut short. */
	private int records() {
		return this.stored.size() + this.incomplete.size();
	}

	/**
	 * Spring MVC refuses the request before the handler method runs: its 4xx is not
	 * stored, the key stays free, the same request is answered afresh, and the corrected
	 * one runs the handler under the key.
	 */
	private void rejectedBeforeHandler(HostileCase hostile, RejectedBeforeHandler rejected, RawResponse response,
			String description, Map<String, Integer> runsBefore) {
		String storageKey = storageKey(rejected.key(), null);
		assertThat(this.stored).as(description).doesNotContainKey(storageKey);
		assertRejectedBeforeHandler(response, rejected, description);
		assertThat(runs()).as(description).isEqualTo(runsBefore);
		assertThat(this.store.inspect(storageKey).isAbsent()).as(description).isTrue();
		RawResponse again = exchange(hostile.request(), Ending.KEEP_OPEN);
		assertRejectedBeforeHandler(again, rejected, hostile.name() + " (again): " + again.describe());
		assertThat(runs()).as(description).isEqualTo(runsBefore);
		assertStoreHoldsExactly(records(), description);
		byte[] corrected = rejected.corrected();
		if (corrected != null) {
			executes(hostile.name() + ", then the corrected request", hostile.endpoint(), corrected,
					new Executes(rejected.key(), null, rejected.correctedStatus()));
		}
	}

	private void assertRejectedBeforeHandler(RawResponse response, RejectedBeforeHandler rejected, String description) {
		assertAnsweredInTime(response, description);
		assertThat(response.status()).as(description).isEqualTo(rejected.status());
		assertThat(response.header("X-Request-Id")).as(description).isNotNull();
		assertThat(response.header("Idempotent-Replayed")).as(description).isNull();
		assertThat(response.bodyText()).as(description)
			.contains("\"status\":" + rejected.status())
			.doesNotContain("idempo.dev/problems");
	}

	private void everyRecordReplays() {
		Map<String, Integer> runsBefore = runs();
		for (Stored record : this.stored.values()) {
			RawResponse replay = exchange(record.request(), Ending.KEEP_OPEN);
			assertReplayOf(replay, record, "key " + record.key() + ": " + replay.describe());
		}
		assertThat(runs()).as("handler runs").isEqualTo(runsBefore);
		assertStoreHoldsExactly(records(), "afterwards");
	}

	private void assertReplayOf(RawResponse response, Stored original, String description) {
		assertAnsweredInTime(response, description);
		assertThat(response.status()).as(description).isEqualTo(original.status());
		assertThat(response.header("Idempotent-Replayed")).as(description).isEqualTo("true");
		assertThat(response.body()).as(description).isEqualTo(original.body());
	}

	private void assertProblem(RawResponse response, Problem problem, String description) {
		assertThat(response.status()).as(description).isEqualTo(problem.status());
		assertThat(response.header("Content-Type")).as(description).isEqualTo("application/problem+json");
		assertThat(response.bodyText()).as(description)
			.contains("\"type\":\"https://idempo.dev/problems/" + problem.slug() + "\"")
			.contains("\"status\":" + problem.status());
	}

	private void assertRefused(RawResponse response, Refused refused, String description) {
		assertThat(response.status()).as(description).isEqualTo(refused.status());
		assertThat(response.bodyText()).as(description).doesNotContain("idempo.dev/problems");
		assertThat(response.header("Idempotent-Replayed")).as(description).isNull();
		String contentType = response.header("Content-Type");
		String requestId = response.header("X-Request-Id");
		switch (refused.by()) {
			case CONTAINER -> {
				assertThat(contentType).as(description).startsWith("text/html");
				assertThat(requestId).as(description).isNull();
			}
			case FIREWALL -> {
				assertThat(contentType).as(description).isEqualTo("application/json");
				assertThat(requestId).as(description).isNull();
			}
			case BODY, NO_HANDLER -> {
				assertThat(contentType).as(description).isEqualTo("application/json");
				assertThat(requestId).as(description).isNotNull();
				assertThat(response.bodyText()).as(description).contains("\"status\":" + refused.status());
			}
			case AUTHENTICATION -> assertThat(response.header("WWW-Authenticate")).as(description).isNotNull();
		}
	}

	private void assertAnsweredInTime(RawResponse response, String description) {
		assertThat(response.timedOut()).as("hangs: " + description).isFalse();
		assertThat(response.elapsed()).as(description).isLessThan(DEADLINE);
		if (response.answered()) {
			assertThat(response.status()).as(description).isLessThan(500);
		}
	}

	/**
	 * The store holds the records this test stored and no other, and no claim: a refused
	 * request wrote nothing, a valid one exactly its own record.
	 */
	private void assertStoreHoldsExactly(int records, String description) {
		assertThat(storedRecords()).as("records in the store after " + description).isEqualTo(records);
		long claims = heldClaims();
		if (claims >= 0) {
			assertThat(claims).as("claims held after " + description).isZero();
		}
	}

	private RawResponse exchange(byte[] request, Ending ending) {
		return RawExchange.exchange(this.port, request, ending, DEADLINE);
	}

	private Map<String, Integer> runs() {
		Map<String, Integer> runs = new LinkedHashMap<>();
		for (String endpoint : ENDPOINTS) {
			runs.put(endpoint, this.executions.count(endpoint));
		}
		return runs;
	}

	/** The storage key of a key for the caller an {@code Authorization} header makes. */
	private static String storageKey(String key, @Nullable String authorization) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		if (authorization != null) {
			request.addHeader("Authorization", authorization);
		}
		return RequestFingerprint.storageKey(new DefaultCallerScopeResolver().resolve(request), key);
	}

	/** A stored response and the request bytes that replay it. */
	private record Stored(String key, byte[] request, int status, byte[] body) {

	}

}
