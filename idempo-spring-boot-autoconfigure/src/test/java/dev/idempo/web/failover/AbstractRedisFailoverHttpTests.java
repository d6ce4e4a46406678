package dev.idempo.web.failover;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.idempo.testsupport.TestRedisSentinel;
import dev.idempo.web.TestHttp;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store across a failover, over HTTP: the test starts a primary, a replica and
 * a Sentinel ({@link TestRedisSentinel}), and an application that finds the primary
 * through the Sentinel ({@code spring.data.redis.sentinel.*}), as Lettuce does in
 * production: it asks the Sentinel for the primary whenever it (re)connects. Clients keep
 * sending keyed requests, each a fresh key then its retry. Mid-run the replica starts
 * lagging (the primary cuts it off, as when a replica falls behind; on one machine
 * replication is otherwise too fast to leave a window), a few more keys complete on the
 * primary, then the primary is killed and the Sentinel promotes the replica. Afterwards
 * every key that ever ran is retried once more.
 * <p>
 * Whatever the settings, these hold: no 500 (only 200, 409 and 503 with
 * {@code Retry-After}), every replay is byte for byte a response its key's handler
 * produced (never torn, never another key's), and after the failover the store works: a
 * fresh key runs once and replays. What asynchronous replication lost is counted and
 * printed: records a client had received whose retry after the failover ran the handler
 * again. Subclasses say how many replicas must acknowledge a stored response and what
 * that guarantees.
 *
 * @author idempo
 */
@Tag("chaos")
abstract class AbstractRedisFailoverHttpTests {

	private static final int CLIENTS = 2;

	private static final int COMPLETED_BEFORE_FAILOVER = 40;

	private static final int COMPLETED_WHILE_LAGGING = 4;

	private static final int EXECUTED_AFTER_FAILOVER = 4;

	private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

	/**
	 * How many replicas must acknowledge a stored response
	 * ({@code idempo.store.redis.replica-acknowledgements}).
	 * @return the number, 0 for none
	 */
	abstract int replicaAcknowledgements();

	/**
	 * Checks what the settings guarantee about lost records.
	 * @param run what the run observed
	 */
	abstract void assertLostRecords(Run run);

	@Test
	void replicaIsPromotedMidRun() throws Exception {
		try (TestRedisSentinel redis = TestRedisSentinel.start()) {
			ConfigurableApplicationContext application = start(redis);
			try {
				run(redis, application);
			}
			finally {
				closeWithin(application, Duration.ofSeconds(30));
			}
		}
	}

	/**
	 * Closes the application, waiting at most {@code timeout}: Lettuce may wait forever
	 * for a pooled connection to the killed primary to close (seen once in CI), and the
	 * test's verdict is already in.
	 */
	private static void closeWithin(ConfigurableApplicationContext application, Duration timeout)
			throws InterruptedException {
		Thread closer = new Thread(application::close, "close-failover-application");
		closer.setDaemon(true);
		closer.start();
		closer.join(timeout.toMillis());
		if (closer.isAlive()) {
			System.out.printf(
					"[idempo tests] the failover application did not close within %s; left to the JVM's exit%n",
					timeout);
		}
	}

	private void run(TestRedisSentinel redis, ConfigurableApplicationContext application) throws Exception {
		TestHttp http = new TestHttp(Integer.parseInt(application.getEnvironment().getProperty("local.server.port")));
		Workload workload = new Workload(http);
		redis.startSentinel();
		workload.start();
		try {
			assertThat(workload.completedBeforeFailover.await(30, TimeUnit.SECONDS))
				.as("keys completed before the failover")
				.isTrue();
			redis.partitionReplication();
			workload.phase.set(Phase.LAGGING);
			assertThat(workload.completedWhileLagging.await(30, TimeUnit.SECONDS))
				.as("keys completed while the replica lags")
				.isTrue();
			workload.phase.set(Phase.FAILOVER);
			redis.killPrimary();
			redis.awaitReplicaPromoted(Duration.ofSeconds(30));
			workload.phase.set(Phase.AFTER);
			assertThat(workload.executedAfterFailover.await(30, TimeUnit.SECONDS))
				.as("keys executed once the replica is the primary, with the servers' logs:%s", redis.describe())
				.isTrue();
		}
		finally {
			workload.stop();
		}
		Run run = verify(http, workload, application);
		System.out.printf("[idempo tests] Redis failover, replica-acknowledgements=%d: %s%n", replicaAcknowledgements(),
				run);
		assertThat(run.unexpectedStatuses()).as("statuses other than 200, 409 and 503").isEmpty();
		assertThat(run.foreignReplays()).as("replays that are not a response of their key's handler").isZero();
		assertThat(run.completed()).isGreaterThanOrEqualTo(COMPLETED_BEFORE_FAILOVER);
		assertThat(redis.currentPrimaryPort()).isEqualTo(redis.replicaPort());
		assertFreshKeysRunOnceAndReplay(http);
		assertLostRecords(run);
	}

	private ConfigurableApplicationContext start(TestRedisSentinel redis) {
		return new SpringApplication(HttpTestApplication.class).run("--server.port=0", "--idempo.store.type=redis",
				"--idempo.lock-ttl=2s", "--idempo.store.redis.replica-acknowledgements=" + replicaAcknowledgements(),
				"--idempo.store.redis.replica-acknowledgement-timeout=300ms",
				"--spring.data.redis.sentinel.master=" + TestRedisSentinel.MASTER_NAME,
				"--spring.data.redis.sentinel.nodes=" + redis.sentinelAddress(), "--spring.data.redis.timeout=2s",
				"--spring.data.redis.connect-timeout=1s", "--logging.level.dev.idempo=error",
				"--logging.level.io.lettuce=error");
	}

	private static void assertFreshKeysRunOnceAndReplay(TestHttp http) {
		for (int i = 0; i < 3; i++) {
			String key = TestHttp.newKey();
			HttpResponse<byte[]> first = http.postWithKey("/t/object", key, "{}");
			assertThat(first.statusCode()).isEqualTo(200);
			assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
			HttpResponse<byte[]> replay = http.postWithKey("/t/object", key, "{}");
			assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(replay.body()).isEqualTo(first.body());
		}
	}

	/**
	 * Retries every key whose handler ran, once the store answers, and counts.
	 */
	private static Run verify(TestHttp http, Workload workload, ConfigurableApplicationContext application) {
		int lostBefore = 0;
		int lostLagging = 0;
		int lostDuring = 0;
		int completed = 0;
		for (Map.Entry<String, KeyHistory> entry : workload.keys.entrySet()) {
			KeyHistory history = entry.getValue();
			Phase lastRun = history.lastExecutionPhase();
			if (lastRun == null) {
				continue;
			}
			completed++;
			HttpResponse<byte[]> retry = retryUntilAnswered(http, entry.getKey());
			history.record(retry, Phase.VERIFY);
			if (retry.statusCode() == 200 && !isReplay(retry)) {
				if (lastRun == Phase.BEFORE) {
					lostBefore++;
				}
				else if (lastRun == Phase.LAGGING) {
					lostLagging++;
				}
				else {
					lostDuring++;
				}
			}
		}
		int duplicates = 0;
		int foreignReplays = 0;
		List<Integer> unexpected = new ArrayList<>();
		int unavailable = 0;
		for (KeyHistory history : workload.keys.values()) {
			duplicates += Math.max(0, history.executionsBefore(Phase.VERIFY) - 1);
			foreignReplays += history.foreignReplays();
			unexpected.addAll(history.unexpectedStatuses());
			unavailable += history.count(503);
		}
		MeterRegistry meters = application.getBean(MeterRegistry.class);
		return new Run(workload.keys.size(), completed, lostBefore, lostLagging, lostDuring, duplicates, unavailable,
				foreignReplays, unexpected, acknowledgements(meters, "acknowledged"),
				acknowledgements(meters, "missing"), responses(meters, "store_error"), responses(meters, "lock_lost"));
	}

	private static HttpResponse<byte[]> retryUntilAnswered(TestHttp http, String key) {
		long deadline = System.nanoTime() + WAIT_NANOS;
		HttpResponse<byte[]> response = http.postWithKey("/t/object", key, "{}");
		while ((response.statusCode() == 409 || response.statusCode() == 503) && System.nanoTime() < deadline) {
			response = http.postWithKey("/t/object", key, "{}");
		}
		return response;
	}

	/** The meter, registered only when the store waits for replicas. */
	private static long acknowledgements(MeterRegistry meters, String result) {
		FunctionCounter counter = meters.find("idempo.store.redis.replica.acknowledgements")
			.tag("result", result)
			.functionCounter();
		return (counter != null) ? Math.round(counter.count()) : 0;
	}

	private static long responses(MeterRegistry meters, String outcome) {
		return Math.round(meters.find("idempo.responses")
			.tag("outcome", outcome)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum());
	}

	static boolean isReplay(HttpResponse<byte[]> response) {
		return response.headers().firstValue("Idempotent-Replayed").isPresent();
	}

	/** When a request was sent. */
	enum Phase {

		/** While the replica is in sync. */
		BEFORE,

		/** While the replica lags, before the primary is killed. */
		LAGGING,

		/** From the kill until the Sentinel had promoted the replica. */
		FAILOVER,

		/** Once the replica is the primary. */
		AFTER,

		/** The final retries. */
		VERIFY

	}

	/**
	 * What one run observed.
	 *
	 * @param keys keys sent
	 * @param completed keys whose handler ran at least once before the final retries
	 * @param lostBefore keys whose last execution ended before the primary was killed and
	 * whose final retry ran the handler again instead of replaying: records acknowledged
	 * to a client, then lost by the failover
	 * @param lostDuring the same, for keys whose last execution was during the failover
	 * or after it
	 * @param duplicates executions beyond a key's first, before the final retries (a
	 * retry during the run that ran the handler again)
	 * @param unavailable 503 answers
	 * @param foreignReplays replays whose body no execution of their key produced
	 * @param unexpectedStatuses statuses other than 200, 409 and 503 (and 503 without
	 * Retry-After, as -503)
	 * @param acknowledged stored responses that enough replicas acknowledged
	 * @param unacknowledged stored responses that too few replicas acknowledged in time
	 * @param storeErrors responses whose storing failed (a complete that got no answer)
	 * @param lockLost responses not stored because their claim was gone
	 */
	record Run(int keys, int completed, int lostBefore, int lostLagging, int lostDuring, int duplicates,
			int unavailable, int foreignReplays, List<Integer> unexpectedStatuses, long acknowledged,
			long unacknowledged, long storeErrors, long lockLost) {

		int lost() {
			return this.lostBefore + this.lostLagging + this.lostDuring;
		}

		@Override
		public String toString() {
			return this.keys + " keys, " + this.completed + " ran; lost records: " + this.lostBefore
					+ " sent while the replica was in sync + " + this.lostLagging + " while it lagged + "
					+ this.lostDuring + " during or after the failover; " + this.duplicates
					+ " duplicate executions during the run; " + this.unavailable + " answers 503; replica "
					+ "acknowledgements: " + this.acknowledged + " in time, " + this.unacknowledged
					+ " missing; responses not stored: " + this.storeErrors + " store errors, " + this.lockLost
					+ " lock lost";
		}

	}

	/** Every answer one key got. */
	static final class KeyHistory {

		private final List<Exchange> exchanges = new CopyOnWriteArrayList<>();

		void record(HttpResponse<byte[]> response, Phase phase) {
			this.exchanges.add(new Exchange(response.statusCode(), isReplay(response),
					response.headers().firstValue("Retry-After").isPresent(), response.body(), phase));
		}

		Phase lastExecutionPhase() {
			Phase last = null;
			for (Exchange exchange : this.exchanges) {
				if (exchange.isExecution()) {
					last = exchange.phase();
				}
			}
			return last;
		}

		int executionsBefore(Phase phase) {
			return (int) this.exchanges.stream()
				.filter((exchange) -> exchange.isExecution() && exchange.phase().compareTo(phase) < 0)
				.count();
		}

		int foreignReplays() {
			List<byte[]> produced = this.exchanges.stream().filter(Exchange::isExecution).map(Exchange::body).toList();
			return (int) this.exchanges.stream()
				.filter((exchange) -> exchange.status() == 200 && exchange.replayed())
				.filter((exchange) -> produced.stream().noneMatch((body) -> Arrays.equals(body, exchange.body())))
				.count();
		}

		List<Integer> unexpectedStatuses() {
			List<Integer> unexpected = new ArrayList<>();
			for (Exchange exchange : this.exchanges) {
				int status = exchange.status();
				if (status != 200 && status != 409 && status != 503) {
					unexpected.add(status);
				}
				else if (status == 503 && !exchange.retryAfter()) {
					unexpected.add(-503);
				}
			}
			return unexpected;
		}

		int count(int status) {
			return (int) this.exchanges.stream().filter((exchange) -> exchange.status() == status).count();
		}

	}

	record Exchange(int status, boolean replayed, boolean retryAfter, byte[] body, Phase phase) {

		boolean isExecution() {
			return this.status == 200 && !this.replayed;
		}

	}

	/** Clients that each send a fresh key, then retry it, until stopped. */
	static final class Workload {

		final Map<String, KeyHistory> keys = new ConcurrentHashMap<>();

		final AtomicReference<Phase> phase = new AtomicReference<>(Phase.BEFORE);

		final CountDownLatch completedBeforeFailover = new CountDownLatch(COMPLETED_BEFORE_FAILOVER);

		final CountDownLatch completedWhileLagging = new CountDownLatch(COMPLETED_WHILE_LAGGING);

		final CountDownLatch executedAfterFailover = new CountDownLatch(EXECUTED_AFTER_FAILOVER);

		private final TestHttp http;

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);

		private final List<Future<?>> futures = new ArrayList<>();

		Workload(TestHttp http) {
			this.http = http;
		}

		void start() {
			for (int i = 0; i < CLIENTS; i++) {
				this.futures.add(this.clients.submit(this::run));
			}
		}

		void stop() throws Exception {
			this.running.set(false);
			for (Future<?> future : this.futures) {
				future.get(60, TimeUnit.SECONDS);
			}
			this.clients.shutdown();
		}

		private void run() {
			while (this.running.get()) {
				String key = TestHttp.newKey();
				KeyHistory history = new KeyHistory();
				this.keys.put(key, history);
				for (int attempt = 0; attempt < 2; attempt++) {
					Phase sent = this.phase.get();
					HttpResponse<byte[]> response = this.http.postWithKey("/t/object", key, "{}");
					history.record(response, sent);
					if (response.statusCode() == 200 && !isReplay(response)) {
						if (sent == Phase.BEFORE) {
							this.completedBeforeFailover.countDown();
						}
						else if (sent == Phase.LAGGING) {
							this.completedWhileLagging.countDown();
						}
						else if (sent == Phase.AFTER) {
							this.executedAfterFailover.countDown();
						}
					}
				}
			}
		}

	}

}
