package dev.idempo.web.pool;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.web.TestHttp;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Proves the SQL stores' connection discipline: an application whose Hikari pool has 4
 * connections and whose idempotent handler queries the database through that pool serves
 * 64 concurrent idempotent requests (48 keys, 16 of them sent twice) without deadlock or
 * timeout. Were every in-flight request's lock pinned to a pooled connection, the first
 * four claims would take the whole pool, their handlers would wait for a fifth
 * connection, and requests would fail once Hikari's short connection timeout ran out.
 *
 * @author idempo
 */
@SpringBootTest(classes = PoolStarvationApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.hikari.maximum-pool-size=4", "spring.datasource.hikari.minimum-idle=4",
				"spring.datasource.hikari.connection-timeout=2000",
				"spring.datasource.hikari.pool-name=starvation-test-pool" })
@DirtiesContext
abstract class PoolStarvationTests {

	private static final int KEYS = 48;

	private static final int DUPLICATED_KEYS = 16;

	@LocalServerPort
	int port;

	@Autowired
	HikariDataSource pool;

	@Autowired
	PoolStarvationApplication.OrdersController controller;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = new TestHttp(this.port);
	}

	@Test
	void sixtyFourConcurrentRequestsThroughAFourConnectionPoolNeitherDeadlockNorTimeOut() throws Exception {
		assertThat(this.pool.getMaximumPoolSize()).isEqualTo(4);
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < KEYS; i++) {
			keys.add(TestHttp.newKey());
		}
		List<String> requests = new ArrayList<>(keys);
		requests.addAll(keys.subList(0, DUPLICATED_KEYS));
		assertThat(requests).hasSize(64);
		Map<String, List<HttpResponse<byte[]>>> responses = new ConcurrentHashMap<>();
		ExecutorService executor = Executors.newFixedThreadPool(requests.size());
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (String key : requests) {
				futures.add(executor.submit(() -> {
					start.await();
					HttpResponse<byte[]> response = this.http.postWithKey("/orders", key, order(key));
					responses.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>()).add(response);
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		for (String key : keys) {
			List<HttpResponse<byte[]>> answers = responses.get(key);
			assertThat(answers).isNotEmpty();
			assertThat(answers).allSatisfy((response) -> assertThat(response.statusCode())
				.as("status for %s: %s", key, TestHttp.text(response))
				.isIn(201, 409));
			assertThat(answers)
				.filteredOn((response) -> response.statusCode() == 201
						&& response.headers().firstValue("Idempotent-Replayed").isEmpty())
				.as("executed responses for %s", key)
				.hasSize(1);
		}
		assertThat(this.controller.executions).hasSize(KEYS);
		assertThat(this.controller.executions.values()).allSatisfy((count) -> assertThat(count).hasValue(1));
		// every key's response is stored: a retry replays the executed response
		for (String key : keys) {
			HttpResponse<byte[]> executed = responses.get(key)
				.stream()
				.filter((response) -> response.statusCode() == 201
						&& response.headers().firstValue("Idempotent-Replayed").isEmpty())
				.findFirst()
				.orElseThrow();
			HttpResponse<byte[]> retry = this.http.postWithKey("/orders", key, order(key));
			assertThat(retry.statusCode()).isEqualTo(201);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(retry.body()).isEqualTo(executed.body());
		}
		assertThat(this.controller.executions.values()).allSatisfy((count) -> assertThat(count).hasValue(1));
		assertThat(this.pool.getHikariPoolMXBean().getTotalConnections()).isLessThanOrEqualTo(4);
	}

	private static String order(String key) {
		return "{\"item\":\"" + key + "\"}";
	}

}
