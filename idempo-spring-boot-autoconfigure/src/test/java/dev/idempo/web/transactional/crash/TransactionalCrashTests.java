package dev.idempo.web.transactional.crash;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import dev.idempo.testsupport.ApplicationProcess;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.web.RequestFingerprint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * What transactional mode promises when a whole instance dies: two instances of
 * {@link CrashTestApplication}, each a JVM of its own, share one database, and the test
 * kills them with SIGKILL, where no code of the application can run any more and only the
 * database's own rollback of a dropped connection happens. The promises under test: the
 * handler's effects and the idempotency record commit together or not at all, so a retry
 * on the surviving instance runs the handler exactly once if the crash came before the
 * commit and replays if it came after; and across many keys, duplicates and kills, no key
 * ever has two business rows. Rows are counted in the database, never in memory. A
 * subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("chaos")
abstract class TransactionalCrashTests {

	private static final String HIBERNATE = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration";

	private static final String REPLAYED = "Idempotent-Replayed";

	private static final Pattern EXECUTION = Pattern.compile("\"execution\"\\s*:\\s*\"([0-9a-f-]{36})\"");

	private static final Pattern INSTANCE = Pattern.compile("\"instance\"\\s*:\\s*\"([a-z]#[0-9]+)\"");

	/**
	 * How long each handler works in its transaction after its insert: long enough that
	 * every kill of the multi-instance run finds transactions under way (with lock-based
	 * claims instead of transactional ones, such kills run keys twice).
	 */
	private static final int HANDLER_WORK_MILLIS = 20;

	private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration RETRY_TIMEOUT = Duration.ofSeconds(30);

	private final String recordTable = SqlStoreProperties.randomTable();

	private final String businessTable = "payments_" + this.recordTable;

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private Path signals = Path.of("unset");

	private @Nullable ApplicationProcess a;

	private @Nullable ApplicationProcess b;

	/** The server under test. */
	abstract TestDatabase database();

	/** {@code idempo.store.type}. */
	abstract String storeType();

	/** The platform of the shipped schema script. */
	abstract String schemaPlatform();

	/** The business table: no unique key on the reference, so a second run shows. */
	abstract String businessTableDdl(String table);

	@BeforeAll
	void startInstances() throws IOException {
		TestDatabase database = database();
		database.runScript(schemaPlatform(), this.recordTable);
		database.jdbc().execute(businessTableDdl(this.businessTable));
		Path directory = Files.createDirectories(
				Path.of("target", "crash-tests", getClass().getSimpleName() + "-" + System.currentTimeMillis()));
		this.signals = Files.createDirectories(directory.resolve("signals"));
		List<String> arguments = new ArrayList<>();
		arguments.add("--spring.datasource.url=" + database.url());
		if (database.username() != null) {
			arguments.add("--spring.datasource.username=" + database.username());
		}
		if (database.password() != null) {
			arguments.add("--spring.datasource.password=" + database.password());
		}
		arguments.add("--spring.autoconfigure.exclude=" + HIBERNATE);
		arguments.add("--spring.main.banner-mode=off");
		arguments.add("--spring.jmx.enabled=false");
		arguments.add("--idempo.store.type=" + storeType());
		arguments.add("--idempo.store.jdbc.table-name=" + this.recordTable);
		arguments.add("--idempo.store.jdbc.initialize-schema=always");
		arguments.add("--crash.business-table=" + this.businessTable);
		arguments.add("--crash.signal-dir=" + this.signals.toAbsolutePath());
		arguments.add("--crash.handler-work-millis=" + HANDLER_WORK_MILLIS);
		this.a = new ApplicationProcess(CrashTestApplication.class, "a", directory, arguments);
		this.b = new ApplicationProcess(CrashTestApplication.class, "b", directory, arguments);
		// both JVMs start at once: the machine has few cores, but start-up waits on I/O
		a().start();
		b().start();
		a().awaitReady();
		b().awaitReady();
	}

	@AfterAll
	void stopInstances() {
		try {
			stop(this.a);
		}
		finally {
			try {
				stop(this.b);
			}
			finally {
				database().dropTable(this.businessTable);
				database().dropTable(this.recordTable);
			}
		}
	}

	/** Kills an instance left running; one that died on its own was reported already. */
	private static void stop(@Nullable ApplicationProcess instance) {
		if (instance != null && instance.isAlive()) {
			instance.kill();
		}
	}

	/**
	 * Every test starts with both instances serving; a test that killed one left it so.
	 */
	@BeforeEach
	void bothInstancesServe() {
		a().startUnlessAlive();
		b().startUnlessAlive();
		a().ensureReady();
		b().ensureReady();
	}

	/**
	 * SIGKILL while the handler's insert is not committed: the database rolls the
	 * transaction back with the dead connection, so neither the row nor a record remains,
	 * the key is free, and the retry on the other instance runs the handler: one row,
	 * written by the other instance, and the client never saw a response from the killed
	 * one.
	 */
	@Test
	@Timeout(180)
	void killedAfterTheInsertBeforeTheCommitTheRetryOnAnotherInstanceRunsOnce() throws Exception {
		String key = UUID.randomUUID().toString();
		CompletableFuture<HttpResponse<String>> held = this.http.sendAsync(
				request(a().port(), key, CrashTestApplication.BEFORE_COMMIT), HttpResponse.BodyHandlers.ofString());
		awaitPause(CrashTestApplication.BEFORE_COMMIT, key, held, a());
		assertThat(businessRows(key)).as("the held insert is not committed").isEmpty();
		HttpResponse<String> duplicate = send(b(), key);
		assertThat(duplicate.statusCode()).as("the other instance, while the killed one still holds the key")
			.isEqualTo(409);
		String killed = a().incarnationName();
		a().kill();
		assertNoResponse(held);
		assertThat(businessRows(key)).as("nothing committed by the killed instance").isEmpty();
		assertThat(records(key)).isZero();
		long killedAt = System.nanoTime();
		HttpResponse<String> retry = retryWhileBusy(b(), key);
		System.out.printf("%s: retry after a kill before commit answered %d after %d ms%n", getClass().getSimpleName(),
				retry.statusCode(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue(REPLAYED)).isEmpty();
		List<Row> rows = businessRows(key);
		assertThat(rows).as("business rows of the key").hasSize(1);
		assertThat(rows.get(0).instance()).isEqualTo(b().incarnationName()).isNotEqualTo(killed);
		assertThat(execution(retry)).isEqualTo(rows.get(0).execution());
		assertThat(records(key)).isEqualTo(1);
		HttpResponse<String> replay = send(b(), key);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.headers().firstValue(REPLAYED)).hasValue("true");
		assertThat(replay.body()).isEqualTo(retry.body());
		assertThat(businessRows(key)).hasSize(1);
	}

	/**
	 * SIGKILL after the commit, before the held-back response reached the client: the row
	 * and the record are committed together, so the retry on the other instance replays
	 * the response of the killed one (its execution id, its instance name) and the
	 * handler never runs again.
	 */
	@Test
	@Timeout(180)
	void killedAfterTheCommitBeforeTheResponseTheRetryOnAnotherInstanceReplays() throws Exception {
		String key = UUID.randomUUID().toString();
		CompletableFuture<HttpResponse<String>> held = this.http.sendAsync(
				request(a().port(), key, CrashTestApplication.AFTER_COMMIT), HttpResponse.BodyHandlers.ofString());
		awaitPause(CrashTestApplication.AFTER_COMMIT, key, held, a());
		String killed = a().incarnationName();
		List<Row> committed = businessRows(key);
		assertThat(committed).as("committed before the pause").hasSize(1);
		assertThat(committed.get(0).instance()).isEqualTo(killed);
		assertThat(records(key)).as("the record committed with the row").isEqualTo(1);
		assertThat(held).as("the response is held back until after the commit's callbacks").isNotDone();
		a().kill();
		assertNoResponse(held);
		HttpResponse<String> retry = retryWhileBusy(b(), key);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue(REPLAYED)).hasValue("true");
		assertThat(execution(retry)).isEqualTo(committed.get(0).execution());
		assertThat(instance(retry)).isEqualTo(killed);
		assertThat(businessRows(key)).as("business rows of the key").isEqualTo(committed);
	}

	/**
	 * Two instances, 240 keys in four rounds, each key sent as three concurrent
	 * duplicates spread over both instances by clients that retry on 409, 503 and
	 * connection errors; in each round one instance, chosen at random, is killed at a
	 * random point while requests are in flight, and started again. In the end every key
	 * has been answered, has exactly one business row, and every answer of a key is the
	 * same response, the one of the execution whose row is in the database.
	 */
	/**
	 * Four rounds of kills and restarts under load: a chaos run (see "The chaos test" in
	 * CONTRIBUTING.md), left out of the plain {@code verify} and run by {@code -Pchaos},
	 * which CI runs after it.
	 */
	@Test
	@Tag("chaos")
	@Timeout(240)
	void multiInstanceRunWithKillsRunsEveryKeyExactlyOnce() throws Exception {
		int rounds = 4;
		int keysPerRound = 60;
		int duplicates = 3;
		long started = System.nanoTime();
		long deadline = started + TimeUnit.SECONDS.toNanos(150);
		Map<String, KeyOutcome> outcomes = new ConcurrentHashMap<>();
		Counters counters = new Counters();
		List<String> kills = new ArrayList<>();
		List<ApplicationProcess> instances = List.of(a(), b());
		ExecutorService clients = Executors.newFixedThreadPool(8 * duplicates);
		try {
			for (int round = 0; round < rounds; round++) {
				a().ensureReady();
				b().ensureReady();
				AtomicInteger answeredKeys = new AtomicInteger();
				List<Future<?>> requests = new ArrayList<>();
				for (int k = 0; k < keysPerRound; k++) {
					String key = UUID.randomUUID().toString();
					KeyOutcome outcome = new KeyOutcome(duplicates);
					outcomes.put(key, outcome);
					int first = ThreadLocalRandom.current().nextInt(instances.size());
					for (int d = 0; d < duplicates; d++) {
						int preferred = (first + d) % instances.size();
						requests.add(clients.submit(() -> {
							sendUntilAnswered(instances, preferred, key, outcome, counters, deadline);
							if (outcome.requestDone()) {
								answeredKeys.incrementAndGet();
							}
						}));
					}
				}
				int killPoint = ThreadLocalRandom.current().nextInt(3, keysPerRound / 2);
				awaitCondition(() -> answeredKeys.get() >= killPoint, Duration.ofSeconds(60),
						"keys answered before the kill of round " + round);
				ApplicationProcess victim = instances.get(ThreadLocalRandom.current().nextInt(instances.size()));
				String victimName = victim.incarnationName();
				victim.kill();
				kills.add(victimName + " after " + answeredKeys.get() + "/" + keysPerRound + " keys");
				// started again at once; the round goes on against the other instance
				victim.start();
				for (Future<?> request : requests) {
					request.get(Math.max(1, deadline - System.nanoTime()) + TimeUnit.SECONDS.toNanos(15),
							TimeUnit.NANOSECONDS);
				}
			}
		}
		finally {
			clients.shutdownNow();
		}
		Map<String, List<Row>> rows = businessRowsByReference();
		List<String> twice = new ArrayList<>();
		List<String> lost = new ArrayList<>();
		List<String> unanswered = new ArrayList<>();
		List<String> inconsistent = new ArrayList<>();
		int replayedOnly = 0;
		for (Map.Entry<String, KeyOutcome> entry : outcomes.entrySet()) {
			String key = entry.getKey();
			KeyOutcome outcome = entry.getValue();
			List<Row> keyRows = rows.getOrDefault(key, List.of());
			if (keyRows.size() > 1) {
				twice.add(key + " " + keyRows);
			}
			List<HttpResponse<String>> answers = outcome.answers();
			if (outcome.failure() != null || answers.size() != duplicates) {
				unanswered
					.add(key + " (" + answers.size() + " of " + duplicates + " answered, " + outcome.failure() + ")");
			}
			if (answers.isEmpty()) {
				continue;
			}
			if (keyRows.isEmpty()) {
				lost.add(key + " answered " + answers.get(0).body());
				continue;
			}
			long fresh = answers.stream().filter((answer) -> answer.headers().firstValue(REPLAYED).isEmpty()).count();
			if (fresh == 0) {
				replayedOnly++;
			}
			for (HttpResponse<String> answer : answers) {
				if (!answer.body().equals(answers.get(0).body())
						|| !execution(answer).equals(keyRows.get(0).execution()) || fresh > 1) {
					inconsistent.add(key + ": " + answers.stream().map(HttpResponse::body).toList() + " vs " + keyRows);
					break;
				}
			}
		}
		System.out.printf(
				"%s: %d keys x %d duplicates in %d ms; kills: %s; %d keys answered only by replays; "
						+ "%d answers 409, %d answers 503, %d connection errors%n",
				getClass().getSimpleName(), outcomes.size(), duplicates,
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), kills, replayedOnly,
				counters.conflicts.get(), counters.unavailable.get(), counters.connectionErrors.get());
		assertThat(outcomes).hasSizeGreaterThanOrEqualTo(200);
		assertThat(kills).hasSize(rounds);
		assertThat(counters.connectionErrors.get()).as("requests cut by the kills").isPositive();
		assertThat(twice).as("keys whose handler ran twice").isEmpty();
		assertThat(lost).as("keys answered 201 without a committed row").isEmpty();
		assertThat(inconsistent).as("keys whose answers differ or are not the committed execution").isEmpty();
		assertThat(unanswered).as("keys not answered in time").isEmpty();
	}

	private void sendUntilAnswered(List<ApplicationProcess> instances, int preferred, String key, KeyOutcome outcome,
			Counters counters, long deadline) {
		int attempt = 0;
		while (System.nanoTime() < deadline) {
			ApplicationProcess target = instances.get((preferred + attempt) % instances.size());
			int port = target.port();
			if (port == 0) {
				// killed or starting: the other one, like a load balancer would
				target = instances.get((preferred + attempt + 1) % instances.size());
				port = target.port();
			}
			attempt++;
			if (port == 0) {
				pace(10);
				continue;
			}
			try {
				HttpResponse<String> response = this.http.send(request(port, key, null),
						HttpResponse.BodyHandlers.ofString());
				int status = response.statusCode();
				if (status == 201) {
					outcome.answer(response);
					return;
				}
				if (status == 409) {
					counters.conflicts.incrementAndGet();
				}
				else if (status == 503) {
					counters.unavailable.incrementAndGet();
				}
				else {
					outcome.fail("answered " + status + " " + response.body());
					return;
				}
			}
			catch (IOException ex) {
				counters.connectionErrors.incrementAndGet();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				outcome.fail("interrupted");
				return;
			}
			pace(5 + ThreadLocalRandom.current().nextInt(20));
		}
		outcome.fail("no answer before the deadline");
	}

	/**
	 * A retrying client's pause between attempts. It orders nothing: every outcome the
	 * test checks holds whatever it is.
	 */
	private static void pace(int millis) {
		LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis));
	}

	private HttpRequest request(int port, String key, @Nullable String pause) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments"))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"reference\":\"" + key + "\"}"));
		if (pause != null) {
			builder.header(CrashTestApplication.PAUSE_HEADER, pause);
		}
		return builder.build();
	}

	private HttpResponse<String> send(ApplicationProcess instance, String key)
			throws IOException, InterruptedException {
		return this.http.send(request(instance.port(), key, null), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * Sends the retry until it is not answered 409 or 503: the database may still be
	 * ending the killed instance's session, and with it the key's lock.
	 */
	private HttpResponse<String> retryWhileBusy(ApplicationProcess instance, String key) throws Exception {
		long deadline = System.nanoTime() + RETRY_TIMEOUT.toNanos();
		while (true) {
			HttpResponse<String> response = send(instance, key);
			if ((response.statusCode() != 409 && response.statusCode() != 503) || System.nanoTime() > deadline) {
				return response;
			}
			pace(10);
		}
	}

	/** Polls for the file that the application creates when a request reaches a pause. */
	private void awaitPause(String point, String key, CompletableFuture<HttpResponse<String>> held,
			ApplicationProcess instance) {
		Path signal = this.signals.resolve(point + "-" + key);
		awaitCondition(() -> {
			if (held.isDone()) {
				fail("The request answered instead of pausing at " + point + ": " + held.join().statusCode() + " "
						+ held.join().body());
			}
			if (!instance.isAlive()) {
				fail(instance.incarnationName() + " died before pausing at " + point + ":\n" + instance.logTail());
			}
			return Files.exists(signal);
		}, SIGNAL_TIMEOUT, "the pause " + point + " of " + instance.incarnationName());
	}

	private static void awaitCondition(BooleanSupplier condition, Duration timeout, String what) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("Timed out after " + timeout + " waiting for " + what);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

	/**
	 * The client of a killed instance gets no response at all, only a dead connection.
	 */
	private static void assertNoResponse(CompletableFuture<HttpResponse<String>> held) {
		assertThatThrownBy(() -> held.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
			.hasCauseInstanceOf(IOException.class);
	}

	private static String execution(HttpResponse<String> response) {
		return field(EXECUTION, response);
	}

	private static String instance(HttpResponse<String> response) {
		return field(INSTANCE, response);
	}

	private static String field(Pattern pattern, HttpResponse<String> response) {
		Matcher matcher = pattern.matcher(response.body());
		assertThat(matcher.find()).as("%s in %s", pattern, response.body()).isTrue();
		return matcher.group(1);
	}

	private List<Row> businessRows(String reference) {
		return database().jdbc()
			.query("SELECT execution, instance FROM " + this.businessTable + " WHERE reference = ? ORDER BY id",
					(rs, i) -> new Row(rs.getString(1), rs.getString(2)), reference);
	}

	private Map<String, List<Row>> businessRowsByReference() {
		Map<String, List<Row>> rows = new HashMap<>();
		database().jdbc()
			.query("SELECT reference, execution, instance FROM " + this.businessTable + " ORDER BY id", (rs) -> {
				rows.computeIfAbsent(rs.getString(1), (reference) -> new ArrayList<>())
					.add(new Row(rs.getString(2), rs.getString(3)));
			});
		return rows;
	}

	private int records(String key) {
		Integer count = database().jdbc()
			.queryForObject("SELECT COUNT(*) FROM " + this.recordTable + " WHERE storage_key = ?", Integer.class,
					RequestFingerprint.storageKey("anonymous", key));
		return (count != null) ? count : -1;
	}

	private ApplicationProcess a() {
		ApplicationProcess instance = this.a;
		assertThat(instance).as("instance a").isNotNull();
		return instance;
	}

	private ApplicationProcess b() {
		ApplicationProcess instance = this.b;
		assertThat(instance).as("instance b").isNotNull();
		return instance;
	}

	/** A business row: which execution wrote it, on which instance. */
	record Row(String execution, String instance) {
	}

	/** Counts of the answers the clients retried on. */
	private static final class Counters {

		final AtomicInteger conflicts = new AtomicInteger();

		final AtomicInteger unavailable = new AtomicInteger();

		final AtomicInteger connectionErrors = new AtomicInteger();

	}

	/** What the clients of one key saw: its 201 answers, or why one gave up. */
	private static final class KeyOutcome {

		private final List<HttpResponse<String>> answers = new ArrayList<>();

		private final AtomicInteger pending;

		private volatile @Nullable String failure;

		KeyOutcome(int requests) {
			this.pending = new AtomicInteger(requests);
		}

		synchronized void answer(HttpResponse<String> response) {
			this.answers.add(response);
		}

		void fail(String failure) {
			this.failure = failure;
		}

		/** One of the key's requests has ended; whether it was the last. */
		boolean requestDone() {
			return this.pending.decrementAndGet() == 0;
		}

		synchronized List<HttpResponse<String>> answers() {
			return List.copyOf(this.answers);
		}

		@Nullable String failure() {
			return this.failure;
		}

	}

}
