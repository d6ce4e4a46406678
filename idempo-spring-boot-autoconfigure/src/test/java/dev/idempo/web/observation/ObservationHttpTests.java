package dev.idempo.web.observation;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationView;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.web.TestHttp;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.observation.ServerRequestObservationContext;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With an {@code ObservationRegistry} (Actuator's), store operations and replays are
 * observations nested in the server request's, which carries the outcome as a
 * high-cardinality key value; an idempotent method's store operations are observed too.
 */
@SpringBootTest(classes = ObservationHttpTests.ObservedApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class ObservationHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	Recorder recorder;

	@Autowired
	Charges charges;

	@BeforeEach
	void clear() {
		this.recorder.stopped.clear();
	}

	@Test
	void storeOperationsAndReplaysAreObservedInsideTheRequest() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		assertThat(http.postWithKey("/observed", key, "{\"a\":1}").statusCode()).isEqualTo(201);
		awaitContexts("idempo.store", 2);
		assertThat(storeOperations()).containsExactly("claim", "complete");
		for (Observation.Context context : contexts("idempo.store")) {
			assertThat(insideServerRequest(context)).as("nested in the server request's observation").isTrue();
			assertThat(context.getLowCardinalityKeyValue("store").getValue()).isEqualTo("memory");
		}
		assertThat(outcomes()).containsExactly("executed");
		this.recorder.stopped.clear();
		assertThat(http.postWithKey("/observed", key, "{\"a\":1}").headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
		assertThat(storeOperations()).containsExactly("claim");
		assertThat(awaitContexts("idempo.replay", 1)).hasSize(1);
		assertThat(contexts("idempo.replay").get(0).getLowCardinalityKeyValue("status").getValue()).isEqualTo("201");
		assertThat(outcomes()).containsExactly("replayed");
	}

	@Test
	void outcomeIsNeverAMetricTag() {
		new TestHttp(this.port).postWithKey("/observed", TestHttp.newKey(), "{\"a\":2}");
		assertThat(outcomes()).containsExactly("executed");
		for (Observation.Context context : contexts("http.server.requests")) {
			assertThat(context.getLowCardinalityKeyValues().stream().map(KeyValue::getKey))
				.doesNotContain("idempo.outcome");
		}
	}

	@Test
	void anIdempotentMethodsStoreOperationsAreObservedToo() {
		String order = TestHttp.newKey();
		assertThat(this.charges.charge(order)).isEqualTo(1);
		assertThat(storeOperations()).containsExactly("claim", "complete");
		assertThat(contexts("idempo.store")).allSatisfy((context) -> {
			assertThat(context.getLowCardinalityKeyValue("store").getValue()).isEqualTo("memory");
			assertThat(insideServerRequest(context)).as("no server request around a method call").isFalse();
		});
		this.recorder.stopped.clear();
		assertThat(this.charges.charge(order)).as("the first result, the method not run again").isEqualTo(1);
		assertThat(storeOperations()).containsExactly("claim");
	}

	private static boolean insideServerRequest(Observation.ContextView context) {
		ObservationView parent = context.getParentObservation();
		while (parent != null) {
			if (parent.getContextView() instanceof ServerRequestObservationContext) {
				return true;
			}
			parent = parent.getContextView().getParentObservation();
		}
		return false;
	}

	/**
	 * The stopped observations of a name, once there are {@code count} of them: an
	 * observation may stop just after the client got its response (a container sends a
	 * response as soon as its declared length is written), so they are polled for.
	 */
	private List<Observation.Context> awaitContexts(String name, int count) {
		long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
		while (contexts(name).size() < count && System.nanoTime() < deadline) {
			Thread.onSpinWait();
		}
		return contexts(name);
	}

	private List<Observation.Context> contexts(String name) {
		return this.recorder.stopped.stream().filter((context) -> name.equals(context.getName())).toList();
	}

	private List<String> storeOperations() {
		return contexts("idempo.store").stream()
			.map((context) -> context.getLowCardinalityKeyValue("operation").getValue())
			.toList();
	}

	/**
	 * The outcomes on the server request observations that stopped. A request's
	 * observation stops after its response has left, so it is polled for.
	 */
	private List<String> outcomes() {
		long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
		while (contexts("http.server.requests").isEmpty() && System.nanoTime() < deadline) {
			Thread.onSpinWait();
		}
		return contexts("http.server.requests").stream()
			.map((context) -> context.getHighCardinalityKeyValue("idempo.outcome"))
			.filter((value) -> value != null)
			.map(KeyValue::getValue)
			.toList();
	}

	/** Keeps every observation that stopped. */
	static class Recorder implements ObservationHandler<Observation.Context> {

		final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

		@Override
		public void onStop(Observation.Context context) {
			this.stopped.add(context);
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

	@SpringBootApplication
	static class ObservedApplication {

		@Bean
		Recorder recorder() {
			return new Recorder();
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@Bean
		Charges charges() {
			return new Charges();
		}

		@RestController
		static class ObservedController {

			@PostMapping("/observed")
			@Idempotent
			ResponseEntity<Map<String, String>> observed(@RequestBody Map<String, String> body) {
				return ResponseEntity.status(201).body(Map.of("ok", "yes"));
			}

		}

	}

	/** A bean with an idempotent method, counting its runs. */
	static class Charges {

		private final AtomicInteger runs = new AtomicInteger();

		@Idempotent(key = "#order")
		public int charge(String order) {
			return this.runs.incrementAndGet();
		}

	}

}
