package dev.idempo.webflux;

import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.HandlerExecutions;
import dev.idempo.web.TestHttp;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;
import dev.idempo.webflux.testapp.ReactiveExecutions;
import dev.idempo.webflux.testapp.WebFluxTestApplication;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring MVC and a WebFlux instance of one service on one Redis store, as during a
 * migration from one stack to the other: both fingerprint a request and scope its key
 * alike, so a retry that reaches the other stack replays the first response byte for byte
 * (status, body, replayable headers) without running its handler, and another body under
 * the same key is refused with 422 there too.
 *
 * @author idempo
 */
class CrossStackReplayTests {

	private static final String KEY_PREFIX = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	private static final String ORDER = "{\"item\":\"book\",\"quantity\":2}";

	private static ConfigurableApplicationContext mvc;

	private static ConfigurableApplicationContext webflux;

	@BeforeAll
	static void startInstances() {
		String[] args = { "--server.port=0", "--idempo.store.type=redis",
				"--idempo.store.redis.key-prefix=" + KEY_PREFIX,
				"--spring.data.redis.url=" + TestRedis.server().url() };
		mvc = new SpringApplication(HttpTestApplication.class)
			.run(with(args, "--spring.main.web-application-type=servlet"));
		webflux = new SpringApplication(WebFluxTestApplication.class)
			.run(with(args, "--spring.main.web-application-type=reactive"));
	}

	private static String[] with(String[] args, String arg) {
		String[] all = Arrays.copyOf(args, args.length + 1);
		all[args.length] = arg;
		return all;
	}

	@AfterAll
	static void stopInstances() {
		if (mvc != null) {
			mvc.close();
		}
		if (webflux != null) {
			webflux.close();
		}
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

	@Test
	void aResponseStoredBySpringMvcIsReplayedByWebFlux() {
		assertReplayedByTheOther(mvc, webflux, executions(mvc), executions(webflux));
	}

	@Test
	void aResponseStoredByWebFluxIsReplayedBySpringMvc() {
		assertReplayedByTheOther(webflux, mvc, executions(webflux), executions(mvc));
	}

	private static void assertReplayedByTheOther(ConfigurableApplicationContext first,
			ConfigurableApplicationContext other, HandlerExecutions firstRuns, HandlerExecutions otherRuns) {
		String key = TestHttp.newKey();
		int firstBefore = firstRuns.count("orders");
		int otherBefore = otherRuns.count("orders");
		HttpResponse<byte[]> stored = TestHttp.of(first).postWithKey("/t/orders", key, ORDER);
		HttpResponse<byte[]> replayed = TestHttp.of(other).postWithKey("/t/orders", key, ORDER);
		assertThat(stored.statusCode()).as(TestHttp.text(stored)).isEqualTo(201);
		assertThat(stored.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(replayed.statusCode()).as(TestHttp.text(replayed)).isEqualTo(201);
		assertThat(replayed.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replayed.body()).isEqualTo(stored.body());
		assertThat(replayed.headers().firstValue("Location")).isEqualTo(stored.headers().firstValue("Location"));
		assertThat(replayed.headers().firstValue("X-Order-Execution"))
			.isEqualTo(stored.headers().firstValue("X-Order-Execution"));
		assertThat(replayed.headers().firstValue("Content-Type"))
			.isEqualTo(stored.headers().firstValue("Content-Type"));
		HttpResponse<byte[]> reused = TestHttp.of(other)
			.postWithKey("/t/orders", key, "{\"item\":\"pen\",\"quantity\":1}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(firstRuns.count("orders")).isEqualTo(firstBefore + 1);
		assertThat(otherRuns.count("orders")).isEqualTo(otherBefore);
	}

	private static HandlerExecutions executions(ConfigurableApplicationContext context) {
		return (context == webflux) ? context.getBean(ReactiveExecutions.class) : context.getBean(Executions.class);
	}

}
