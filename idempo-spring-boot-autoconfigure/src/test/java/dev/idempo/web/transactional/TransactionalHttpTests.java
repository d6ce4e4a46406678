package dev.idempo.web.transactional;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.LockingStore;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.web.RequestFingerprint;
import dev.idempo.web.TestHttp;
import dev.idempo.web.transactional.app.Pauses;
import dev.idempo.web.transactional.app.TransactionalTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.transaction.PlatformTransactionManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactional mode end to end, over HTTP, against a real database, counting payment
 * rows and records in the database: a subclass per database, driver and transaction
 * manager. A handler's writes and its record commit together or not at all; duplicates
 * never run it twice.
 */
@SpringBootTest(classes = TransactionalTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
abstract class TransactionalHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	Pauses pauses;

	@Autowired
	LockingStore store;

	@Autowired
	PlatformTransactionManager transactionManager;

	@Autowired
	MeterRegistry meterRegistry;

	@Autowired
	IdempotencyProperties properties;

	@Value("${test.payments-table}")
	String paymentsTable;

	@Value("${idempo.store.jdbc.table-name}")
	String recordTable;

	TestHttp http;

	/** What this class runs against. */
	abstract TransactionalSetup setup();

	TestDatabase database() {
		return setup().database();
	}

	/** Whether the context runs JPA (a JpaTransactionManager) and its endpoint. */
	boolean jpa() {
		return setup().jpa();
	}

	@BeforeEach
	void setUp() {
		this.http = new TestHttp(this.port);
		this.pauses.reset();
	}

	@Test
	void transactionManagerIsTheExpectedOne() {
		assertThat(this.transactionManager.getClass().getSimpleName())
			.isEqualTo(jpa() ? "JpaTransactionManager" : "JdbcTransactionManager");
	}

	@Test
	void duplicatesOfOneKeyRunTheJdbcHandlerOnce() throws Exception {
		duplicatesRunOnce("/tx/jdbc/payments");
	}

	/**
	 * 64 requests with one key at once: the first to claim it holds it (paused after its
	 * insert) until every other has been answered, each with 409 at once; then one
	 * business row, one record, and a retry replays byte for byte.
	 */
	void duplicatesRunOnce(String path) throws Exception {
		String key = TestHttp.newKey();
		String reference = reference();
		int duplicates = 64;
		ExecutorService executor = Executors.newFixedThreadPool(duplicates);
		CountDownLatch start = new CountDownLatch(1);
		Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
		AtomicInteger answered = new AtomicInteger();
		List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
		try {
			for (int i = 0; i < duplicates; i++) {
				futures.add(executor.submit(() -> {
					start.await();
					HttpResponse<byte[]> response = post(path, key, reference, "hold");
					statuses.computeIfAbsent(response.statusCode(), (status) -> new AtomicInteger()).incrementAndGet();
					if (response.statusCode() != 201) {
						answered.incrementAndGet();
					}
					return response;
				}));
			}
			start.countDown();
			this.pauses.awaitArrival();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (answered.get() < duplicates - 1 && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			assertThat(answered.get()).as("duplicates answered while the first holds the key")
				.isEqualTo(duplicates - 1);
			this.pauses.release();
			HttpResponse<byte[]> first = null;
			for (Future<HttpResponse<byte[]>> future : futures) {
				HttpResponse<byte[]> response = future.get(30, TimeUnit.SECONDS);
				if (response.statusCode() == 201) {
					first = response;
				}
				else {
					assertThat(response.statusCode()).isEqualTo(409);
					assertThat(response.headers().firstValue("Retry-After")).isPresent();
				}
			}
			assertThat(statuses.get(201)).hasValue(1);
			assertThat(first).isNotNull();
			assertThat(payments(reference)).isEqualTo(1);
			assertThat(records(key)).isEqualTo(1);
			HttpResponse<byte[]> replay = post(path, key, reference, null);
			assertThat(replay.statusCode()).isEqualTo(201);
			assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
			assertThat(replay.body()).isEqualTo(first.body());
			assertThat(payments(reference)).isEqualTo(1);
		}
		finally {
			this.pauses.release();
			executor.shutdownNow();
		}
	}

	@Test
	void exceptionAfterTheInsertRollsBackAndFreesTheKey() {
		String key = TestHttp.newKey();
		String reference = reference();
		assertThat(post("/tx/jdbc/payments", key, reference, "fail").statusCode()).isEqualTo(500);
		assertThat(payments(reference)).isZero();
		assertThat(records(key)).isZero();
		HttpResponse<byte[]> retry = post("/tx/jdbc/payments", key, reference, null);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(payments(reference)).isEqualTo(1);
		assertThat(records(key)).isEqualTo(1);
	}

	/**
	 * Spring MVC refuses the request while it resolves the handler's arguments (here a
	 * missing header): the transaction rolls back with nothing written, the key is free,
	 * and the corrected retry with the same key runs the handler once.
	 */
	@Test
	void requestRejectedBeforeTheHandlerRollsBackAndTheCorrectedRetryRuns() {
		String key = TestHttp.newKey();
		String reference = reference();
		double before = notStored("rejected_before_handler");
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> rejected = this.http.post("/tx/jdbc/payments", "{\"amount\":1}", "Idempotency-Key",
					key);
			assertThat(rejected.statusCode()).isEqualTo(400);
			assertThat(rejected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		assertThat(records(key)).isZero();
		assertThat(notStored("rejected_before_handler")).isEqualTo(before + 2);
		HttpResponse<byte[]> corrected = post("/tx/jdbc/payments", key, reference, null);
		assertThat(corrected.statusCode()).isEqualTo(201);
		assertThat(corrected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(payments(reference)).isEqualTo(1);
		assertThat(records(key)).isEqualTo(1);
		assertThat(post("/tx/jdbc/payments", key, reference, null).headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
		assertThat(payments(reference)).isEqualTo(1);
	}

	private double notStored(String reason) {
		Counter counter = this.meterRegistry.find("idempo.responses")
			.tags("outcome", "not_stored", "reason", reason)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	/**
	 * By default a 5xx rolls back and frees the key; where {@code idempo.responses}
	 * stores it, it commits with its record and a retry gets it replayed byte for byte.
	 */
	@Test
	void serverErrorResponseFollowsTheStoragePolicy() {
		String key = TestHttp.newKey();
		String reference = reference();
		HttpResponse<byte[]> first = post("/tx/jdbc/payments", key, reference, "status-503");
		assertThat(first.statusCode()).isEqualTo(503);
		if (!this.properties.getResponses().toPolicy().isStored(503)) {
			assertThat(payments(reference)).isZero();
			assertThat(records(key)).isZero();
			assertThat(post("/tx/jdbc/payments", key, reference, null).statusCode()).isEqualTo(201);
			assertThat(payments(reference)).isEqualTo(1);
			return;
		}
		assertThat(payments(reference)).isEqualTo(1);
		assertThat(records(key)).isEqualTo(1);
		HttpResponse<byte[]> retry = post("/tx/jdbc/payments", key, reference, "status-503");
		assertThat(retry.statusCode()).isEqualTo(503);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(payments(reference)).isEqualTo(1);
	}

	@Test
	void responseTooLargeToStoreCommitsWithARecordThatStopsASecondRun() {
		String key = TestHttp.newKey();
		String reference = reference();
		HttpResponse<byte[]> first = post("/tx/jdbc/payments", key, reference, "big");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.body().length).isGreaterThan(4096);
		assertThat(payments(reference)).isEqualTo(1);
		HttpResponse<byte[]> retry = post("/tx/jdbc/payments", key, reference, "big");
		assertThat(retry.statusCode()).isEqualTo(410);
		assertThat(retry.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(TestHttp.text(retry)).contains("https://idempo.dev/problems/response-not-replayable");
		assertThat(payments(reference)).isEqualTo(1);
	}

	@Test
	void mismatchedRetryIsRejectedWithoutRunning() {
		String key = TestHttp.newKey();
		String reference = reference();
		assertThat(post("/tx/jdbc/payments", key, reference, null).statusCode()).isEqualTo(201);
		HttpResponse<byte[]> other = this.http.post("/tx/jdbc/payments", "{\"amount\":2}", "Idempotency-Key", key,
				"X-Reference", reference);
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(payments(reference)).isEqualTo(1);
	}

	/**
	 * The backend dies with the transaction's commit under way (paused after idempo's
	 * insert, killed from another session): 503, nothing committed, and the retry runs
	 * once.
	 */
	@Test
	void connectionLostAtCommitAnswers503AndTheRetryRunsOnce() throws Exception {
		String key = TestHttp.newKey();
		String reference = reference();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor
				.submit(() -> post("/tx/jdbc/payments", key, reference, "pause-before-commit"));
			long session = this.pauses.awaitArrival();
			setup().kill(session);
			this.pauses.release();
			HttpResponse<byte[]> response = first.get(30, TimeUnit.SECONDS);
			assertThat(response.statusCode()).isEqualTo(503);
			assertThat(response.headers().firstValue("Retry-After")).isPresent();
			assertThat(TestHttp.text(response)).contains("https://idempo.dev/problems/commit-failed");
			assertThat(payments(reference)).isZero();
			assertThat(records(key)).isZero();
			HttpResponse<byte[]> retry = post("/tx/jdbc/payments", key, reference, null);
			assertThat(retry.statusCode()).isEqualTo(201);
			assertThat(payments(reference)).isEqualTo(1);
			assertThat(post("/tx/jdbc/payments", key, reference, null).headers().firstValue("Idempotent-Replayed"))
				.hasValue("true");
			assertThat(payments(reference)).isEqualTo(1);
		}
		finally {
			this.pauses.release();
			executor.shutdownNow();
		}
	}

	/**
	 * A redirect is held back until the commit like any other response: with the backend
	 * killed before the commit, the client gets 503, never the 302; the retry runs, and
	 * its redirect is replayed.
	 */
	@Test
	void redirectIsHeldBackUntilTheCommit() throws Exception {
		String key = TestHttp.newKey();
		String reference = reference();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> first = executor
				.submit(() -> post("/tx/jdbc/redirect", key, reference, "pause-before-commit"));
			long session = this.pauses.awaitArrival();
			setup().kill(session);
			this.pauses.release();
			assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(503);
			assertThat(payments(reference)).isZero();
			HttpResponse<byte[]> retry = post("/tx/jdbc/redirect", key, reference, null);
			assertThat(retry.statusCode()).isEqualTo(302);
			assertThat(retry.headers().firstValue("Location"))
				.hasValueSatisfying((location) -> assertThat(location).endsWith("/payments/" + reference));
			HttpResponse<byte[]> replay = post("/tx/jdbc/redirect", key, reference, null);
			assertThat(replay.statusCode()).isEqualTo(302);
			assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(payments(reference)).isEqualTo(1);
		}
		finally {
			this.pauses.release();
			executor.shutdownNow();
		}
	}

	/**
	 * A transactional claim and a lock session's claim of one key exclude each other
	 * (same lock), both ways.
	 */
	@Test
	void transactionalAndLockSessionClaimsExcludeEachOther() throws Exception {
		String key = TestHttp.newKey();
		String storageKey = RequestFingerprint.storageKey("anonymous", key);
		ClaimResult claim = this.store.claim(storageKey, Duration.ofSeconds(30));
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
		try {
			assertThat(post("/tx/jdbc/payments", key, reference(), null).statusCode()).isEqualTo(409);
		}
		finally {
			this.store.release(((ClaimResult.Acquired) claim).lease());
		}
		String other = TestHttp.newKey();
		String reference = reference();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<HttpResponse<byte[]>> held = executor
				.submit(() -> post("/tx/jdbc/payments", other, reference, "hold"));
			this.pauses.awaitArrival();
			assertThat(this.store.claim(RequestFingerprint.storageKey("anonymous", other), Duration.ofSeconds(30)))
				.isInstanceOf(ClaimResult.InProgress.class);
			this.pauses.release();
			assertThat(held.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
			assertThat(this.store.claim(RequestFingerprint.storageKey("anonymous", other), Duration.ofSeconds(30)))
				.isInstanceOf(ClaimResult.Completed.class);
		}
		finally {
			this.pauses.release();
			executor.shutdownNow();
		}
	}

	HttpResponse<byte[]> post(String path, String key, String reference, String behaviour) {
		List<String> headers = new ArrayList<>(List.of("Idempotency-Key", key, "X-Reference", reference));
		if (behaviour != null) {
			headers.add("X-Behaviour");
			headers.add(behaviour);
		}
		return this.http.post(path, "{\"amount\":1}", headers.toArray(String[]::new));
	}

	static String reference() {
		return TestHttp.newKey();
	}

	int payments(String reference) {
		Integer count = database().jdbc()
			.queryForObject("SELECT COUNT(*) FROM " + this.paymentsTable + " WHERE reference = ?", Integer.class,
					reference);
		return (count != null) ? count : -1;
	}

	int records(String key) {
		Integer count = database().jdbc()
			.queryForObject("SELECT COUNT(*) FROM " + this.recordTable + " WHERE storage_key = ?", Integer.class,
					RequestFingerprint.storageKey("anonymous", key));
		return (count != null) ? count : -1;
	}

}
