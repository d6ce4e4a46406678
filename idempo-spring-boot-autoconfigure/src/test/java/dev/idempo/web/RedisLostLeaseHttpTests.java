package dev.idempo.web;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A handler that outlives its Redis lease because renewal cannot reach Redis: instance A
 * talks to Redis through a {@link TcpProxy} that is black-holed while A's handler is held
 * (nothing passes, nothing is closed, as in a network partition), with a short
 * {@code idempo.lock-ttl} and a command timeout shorter than it. Instance B reaches the
 * same Redis directly, with the same key prefix, and claims the key once A's lease has
 * expired in Redis. It proves, over HTTP, what the SPEC promises for a lost claim:
 * <ul>
 * <li>A's handler still answers its client (the handler ran; no 500), but its response is
 * not stored, and {@code idempo.responses{outcome=lock_lost}} counts it exactly
 * once;</li>
 * <li>B's record is never overwritten or deleted, even by A's commands that the partition
 * held back and delivers late: every later request replays B's bytes;</li>
 * <li>each instance ran the handler once.</li>
 * </ul>
 * The second test ends A's handler while the partition lasts, so that its complete times
 * out: counted as a store error, still no 500 and nothing torn.
 *
 * @author idempo
 */
class RedisLostLeaseHttpTests {

	private static final String KEY_PREFIX = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	/** The lease: renewed every third of it, lost after a whole one without renewal. */
	private static final String LOCK_TTL = "1s";

	/** Lettuce's command timeout on instance A: well inside one lease. */
	private static final String COMMAND_TIMEOUT = "250ms";

	/**
	 * B's handler executions are numbered from here, so that its bodies differ from A's.
	 */
	private static final int B_FIRST_EXECUTION = 1001;

	private static final long POLL_NANOS = TimeUnit.SECONDS.toNanos(20);

	private static TcpProxy proxy;

	private static ConfigurableApplicationContext instanceA;

	private static ConfigurableApplicationContext instanceB;

	private final ExecutorService client = Executors.newSingleThreadExecutor();

	@BeforeAll
	static void startInstances() {
		URI real = URI.create(TestRedis.server().url());
		proxy = TcpProxy.start(0, real.getHost(), real.getPort());
		instanceA = start(TestHttp.onLoopbackPort(real, proxy.port()));
		instanceB = start(real);
		for (int i = 1; i < B_FIRST_EXECUTION; i++) {
			executions(instanceB).increment("slow");
		}
	}

	@AfterAll
	static void stopInstances() {
		if (proxy != null) {
			proxy.forward();
		}
		if (instanceA != null) {
			instanceA.getBean(Executions.class).releaseHandlers();
			instanceA.close();
		}
		if (instanceB != null) {
			instanceB.close();
		}
		if (proxy != null) {
			proxy.close();
		}
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

	@AfterEach
	void heal() {
		proxy.forward();
		instanceA.getBean(Executions.class).releaseHandlers();
		this.client.shutdownNow();
	}

	@Test
	void aHandlerThatOutlivesItsLeaseDoesNotStoreAndTheNewcomersRecordStands() throws Exception {
		Partition partition = partitionWhileAHandles();
		TestHttp a = partition.a();
		TestHttp b = partition.b();
		String key = partition.key();
		double lockLostBefore = partition.lockLostBefore();
		double storeErrorsBefore = partition.storeErrorsBefore();
		int executionsA = partition.executionsA();
		int executionsB = partition.executionsB();
		Future<HttpResponse<byte[]>> first = partition.first();
		// A cannot renew; once its lease expires in Redis, B claims the key
		HttpResponse<byte[]> newcomer = awaitNot409(() -> b.postWithKey("/t/slow", key, "{}"));
		assertThat(newcomer.statusCode()).isEqualTo(200);
		assertThat(newcomer.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(TestHttp.text(newcomer)).isEqualTo("{\"execution\":" + (executionsB + 1) + "}");

		proxy.forward();
		executions(instanceA).releaseHandlers();
		HttpResponse<byte[]> late = first.get(30, TimeUnit.SECONDS);
		assertThat(late.statusCode()).as("A's handler ran: its client gets its response").isEqualTo(200);
		assertThat(late.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(TestHttp.text(late)).isEqualTo("{\"execution\":" + (executionsA + 1) + "}");
		assertThat(responses(instanceA, "lock_lost") - lockLostBefore).isEqualTo(1);
		assertThat(responses(instanceA, "store_error") - storeErrorsBefore).isZero();

		assertReplaysTheNewcomer(a, b, key, newcomer);
		assertThat(executions(instanceA).count("slow")).isEqualTo(executionsA + 1);
		assertThat(executions(instanceB).count("slow")).isEqualTo(executionsB + 1);
	}

	@Test
	void aHandlerThatEndsDuringThePartitionAnswersAndItsLateCommandsChangeNothing() throws Exception {
		Partition partition = partitionWhileAHandles();
		TestHttp a = partition.a();
		TestHttp b = partition.b();
		String key = partition.key();
		double lockLostBefore = partition.lockLostBefore();
		double storeErrorsBefore = partition.storeErrorsBefore();
		int executionsA = partition.executionsA();
		int executionsB = partition.executionsB();
		Future<HttpResponse<byte[]>> first = partition.first();
		// well inside the lease: A tries to store, and its complete times out
		executions(instanceA).releaseHandlers();
		HttpResponse<byte[]> answered = first.get(30, TimeUnit.SECONDS);
		assertThat(answered.statusCode()).isEqualTo(200);
		assertThat(TestHttp.text(answered)).isEqualTo("{\"execution\":" + (executionsA + 1) + "}");
		assertThat(responses(instanceA, "store_error") - storeErrorsBefore).isEqualTo(1);
		assertThat(responses(instanceA, "lock_lost") - lockLostBefore).isZero();

		HttpResponse<byte[]> newcomer = awaitNot409(() -> b.postWithKey("/t/slow", key, "{}"));
		assertThat(newcomer.statusCode()).isEqualTo(200);
		assertThat(newcomer.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(TestHttp.text(newcomer)).isEqualTo("{\"execution\":" + (executionsB + 1) + "}");

		// the partition heals: A's complete and release, held back until now, reach Redis
		// behind this PING (one connection, in order) and find B's record, not their lock
		proxy.forward();
		instanceA.getBean(RedisLockingStore.class).ping();
		assertReplaysTheNewcomer(a, b, key, newcomer);
		assertThat(executions(instanceA).count("slow")).isEqualTo(executionsA + 1);
		assertThat(executions(instanceB).count("slow")).isEqualTo(executionsB + 1);
	}

	/**
	 * Notes the counters, lets a request on A enter its handler and hold there, then cuts
	 * A off from Redis (nothing passes, nothing is closed).
	 */
	private Partition partitionWhileAHandles() throws InterruptedException {
		TestHttp a = TestHttp.of(instanceA);
		String key = TestHttp.newKey();
		Partition partition = new Partition(a, TestHttp.of(instanceB), key, responses(instanceA, "lock_lost"),
				responses(instanceA, "store_error"), executions(instanceA).count("slow"),
				executions(instanceB).count("slow"), holdHandlerOnA(a, key));
		proxy.blackHole();
		return partition;
	}

	private record Partition(TestHttp a, TestHttp b, String key, double lockLostBefore, double storeErrorsBefore,
			int executionsA, int executionsB, Future<HttpResponse<byte[]>> first) {

	}

	private Future<HttpResponse<byte[]>> holdHandlerOnA(TestHttp a, String key) throws InterruptedException {
		Executions executions = executions(instanceA);
		executions.holdHandlers();
		Future<HttpResponse<byte[]>> first = this.client.submit(() -> a.postWithKey("/t/slow", key, "{}"));
		assertThat(executions.awaitEntered()).isTrue();
		return first;
	}

	private static void assertReplaysTheNewcomer(TestHttp a, TestHttp b, String key, HttpResponse<byte[]> newcomer) {
		for (TestHttp instance : new TestHttp[] { a, b }) {
			HttpResponse<byte[]> replay = instance.postWithKey("/t/slow", key, "{}");
			assertThat(replay.statusCode()).isEqualTo(200);
			assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(replay.body()).isEqualTo(newcomer.body());
		}
	}

	private static HttpResponse<byte[]> awaitNot409(Supplier<HttpResponse<byte[]>> request) {
		long deadline = System.nanoTime() + POLL_NANOS;
		HttpResponse<byte[]> response = request.get();
		while (response.statusCode() == 409 && System.nanoTime() < deadline) {
			response = request.get();
		}
		return response;
	}

	private static double responses(ConfigurableApplicationContext instance, String outcome) {
		Counter counter = instance.getBean(MeterRegistry.class)
			.find("idempo.responses")
			.tag("outcome", outcome)
			.tag("reason", "none")
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static Executions executions(ConfigurableApplicationContext instance) {
		return instance.getBean(Executions.class);
	}

	private static ConfigurableApplicationContext start(URI redis) {
		return new SpringApplication(HttpTestApplication.class).run("--server.port=0", "--idempo.store.type=redis",
				"--idempo.store.redis.key-prefix=" + KEY_PREFIX, "--idempo.lock-ttl=" + LOCK_TTL,
				"--spring.data.redis.url=" + redis, "--spring.data.redis.timeout=" + COMMAND_TIMEOUT,
				"--spring.data.redis.connect-timeout=" + COMMAND_TIMEOUT);
	}

}
