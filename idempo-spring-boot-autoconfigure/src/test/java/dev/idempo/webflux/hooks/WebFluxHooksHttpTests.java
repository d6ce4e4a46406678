package dev.idempo.webflux.hooks;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationView;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.IdempotencyKeyReusedException;
import dev.idempo.Idempotent;
import dev.idempo.core.CapturedResponse;
import dev.idempo.core.FingerprintStrategy;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.ProblemCustomizer;
import dev.idempo.core.StorageKeys;
import dev.idempo.core.StoredResponseFilter;
import dev.idempo.store.LockingStore;
import dev.idempo.store.RecordState;
import dev.idempo.web.TestHttp;
import dev.idempo.webflux.ReactiveIdempotentResponse;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.observation.ServerRequestObservationContext;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stack-neutral hooks on WebFlux, over real HTTP on Reactor Netty with BlockHound
 * installed: what is fingerprinted ({@link FingerprintStrategy}), what is stored
 * ({@link StoredResponseFilter}), how problems read ({@link ProblemCustomizer}), a
 * handler's say over its own response ({@link ReactiveIdempotentResponse}), and the
 * replay observation and the outcome on the server request's observation.
 *
 * @author idempo
 */
@SpringBootTest(classes = WebFluxHooksHttpTests.HooksApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempo.store.type=memory" })
class WebFluxHooksHttpTests {

	static final AtomicInteger executions = new AtomicInteger();

	@LocalServerPort
	int port;

	@Autowired
	LockingStore store;

	@Autowired
	RecordingListener listener;

	@Autowired
	Recorder recorder;

	@BeforeEach
	void clear() {
		this.listener.responses.clear();
		this.recorder.stopped.clear();
	}

	private HttpResponse<byte[]> post(String path, String key, String body, String... headers) {
		String[] all = new String[headers.length + 2];
		all[0] = "Idempotency-Key";
		all[1] = key;
		System.arraycopy(headers, 0, all, 2, headers.length);
		return new TestHttp(this.port).post(path, body, all);
	}

	@Test
	void fingerprintStrategyLeavesOutTheClientTimestamp() {
		String key = TestHttp.newKey();
		assertThat(post("/hooks/pay", key, "{\"amount\":5,\"timestamp\":\"10:00:01\"}").statusCode()).isEqualTo(201);
		HttpResponse<byte[]> retry = post("/hooks/pay", key, "{\"amount\":5,\"timestamp\":\"10:00:07\"}");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(post("/hooks/pay", key, "{\"amount\":6,\"timestamp\":\"10:00:09\"}").statusCode()).isEqualTo(422);
	}

	@Test
	void responseFilterRedactsWhatIsReplayedAndMayRefuseToStore() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = post("/hooks/pay", key, "{\"amount\":1}");
		assertThat(first.headers().firstValue("X-Signed-Url")).isPresent();
		HttpResponse<byte[]> replay = post("/hooks/pay", key, "{\"amount\":1}");
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("X-Signed-Url")).isEmpty();
		assertThat(replay.body()).isEqualTo(first.body());
		String refused = TestHttp.newKey();
		int before = executions.get();
		this.listener.responses.clear();
		HttpResponse<byte[]> unstored = post("/hooks/pay", refused, "{\"amount\":2}", "X-No-Store", "yes");
		assertThat(unstored.statusCode()).as("the client gets what the handler produced").isEqualTo(201);
		assertThat(unstored.headers().firstValue("X-Signed-Url")).isPresent();
		assertThat(this.listener.responses).containsExactly("NOT_STORED:REFUSED");
		HttpResponse<byte[]> again = post("/hooks/pay", refused, "{\"amount\":2}", "X-No-Store", "yes");
		assertThat(again.statusCode()).isEqualTo(201);
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(executions.get() - before).isEqualTo(2);
	}

	@Test
	void handlerSetsItsResponsesTtlFromTheReactorContext() {
		String key = TestHttp.newKey();
		assertThat(post("/hooks/quote", key, "{\"amount\":1}", "X-Ttl-Seconds", "90").statusCode()).isEqualTo(201);
		RecordState state = this.store.inspect(StorageKeys.of("anonymous", key));
		// the handlers' TTL is idempo.response-ttl's 24 hours
		assertThat(state.expiresAt()).isBetween(Instant.now().plusSeconds(30), Instant.now().plusSeconds(120));
	}

	@Test
	void handlerOptsOutOfStoringThroughTheExchange() {
		String once = TestHttp.newKey();
		int before = executions.get();
		assertThat(post("/hooks/quote", once, "{\"amount\":1}", "X-Do-Not-Store", "yes").statusCode()).isEqualTo(201);
		assertThat(this.listener.responses).containsExactly("NOT_STORED:REFUSED");
		HttpResponse<byte[]> again = post("/hooks/quote", once, "{\"amount\":1}", "X-Do-Not-Store", "yes");
		assertThat(again.statusCode()).isEqualTo(201);
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(executions.get() - before).isEqualTo(2);
	}

	@Test
	void outsideAProtectedRequestTheHandlersSayDoesNothing() {
		HttpResponse<byte[]> unkeyed = new TestHttp(this.port).post("/hooks/quote", "{\"amount\":1}", "X-Ttl-Seconds",
				"90", "X-Do-Not-Store", "yes");
		assertThat(unkeyed.statusCode()).isEqualTo(201);
		assertThat(TestHttp.text(unkeyed)).contains("\"ttlApplied\":false").contains("\"refused\":false");
	}

	@Test
	void problemCustomizerAddsMembersButNotItsTypeOrStatus() {
		HttpResponse<byte[]> invalid = new TestHttp(this.port).post("/hooks/pay", "{\"amount\":1}", "Idempotency-Key",
				"");
		assertThat(invalid.statusCode()).isEqualTo(400);
		assertThat(TestHttp.text(invalid)).contains("\"traceId\":\"trace-42\"")
			.contains("\"type\":\"https://idempo.dev/problems/invalid-key\"")
			.contains("\"status\":400")
			.contains("\"title\":\"Bad key\"")
			.contains("\"path\":\"/hooks/pay\"")
			.contains("\"ratio\":\"NaN\"");
	}

	@Test
	void problemCustomizerAppliesToAKeyReusedThatEscapesAHandler() {
		HttpResponse<byte[]> reused = new TestHttp(this.port).post("/hooks/reused", "{}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(TestHttp.text(reused)).contains("\"traceId\":\"trace-42\"")
			.contains("\"type\":\"https://idempo.dev/problems/key-reused\"")
			.contains("\"status\":422");
	}

	@Test
	void replaysAreObservedInsideTheRequestWhichCarriesTheOutcome() {
		String key = TestHttp.newKey();
		assertThat(post("/hooks/pay", key, "{\"amount\":3}").statusCode()).isEqualTo(201);
		assertThat(outcomes(1)).containsExactly("executed");
		this.recorder.stopped.clear();
		assertThat(post("/hooks/pay", key, "{\"amount\":3}").headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
		List<Observation.Context> replays = awaitContexts("idempo.replay", 1);
		assertThat(replays).hasSize(1);
		assertThat(replays.get(0).getLowCardinalityKeyValue("status").getValue()).isEqualTo("201");
		assertThat(insideServerRequest(replays.get(0))).as("nested in the server request's observation").isTrue();
		assertThat(outcomes(1)).containsExactly("replayed");
		assertThat(contexts("idempo.store")).as("store operations are observed too").isNotEmpty();
		for (Observation.Context context : contexts("http.server.requests")) {
			assertThat(context.getLowCardinalityKeyValues().stream().map(KeyValue::getKey))
				.doesNotContain("idempo.outcome");
		}
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
	 * observation may stop just after the client got its response, so they are polled
	 * for, up to a deadline.
	 */
	private List<Observation.Context> awaitContexts(String name, int count) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (contexts(name).size() < count && System.nanoTime() < deadline) {
			Thread.onSpinWait();
		}
		return contexts(name);
	}

	private List<Observation.Context> contexts(String name) {
		return this.recorder.stopped.stream().filter((context) -> name.equals(context.getName())).toList();
	}

	private List<String> outcomes(int requests) {
		return awaitContexts("http.server.requests", requests).stream()
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

	/** Keeps what became of each protected web response. */
	static class RecordingListener implements IdempotencyListener {

		final List<String> responses = new CopyOnWriteArrayList<>();

		@Override
		public void onResponse(Source source, ResponseOutcome outcome, NotStoredReason reason) {
			if (source == Source.WEB) {
				this.responses.add(outcome.name() + ":" + reason.name());
			}
		}

	}

	@SpringBootApplication
	static class HooksApplication {

		@Bean
		SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@Bean
		Recorder recorder() {
			return new Recorder();
		}

		@Bean
		RecordingListener recordingListener() {
			return new RecordingListener();
		}

		@Bean
		FingerprintStrategy withoutTimestamp() {
			return (request, body) -> FingerprintStrategy.DEFAULT.fingerprint(request,
					new String(body, StandardCharsets.UTF_8).replaceAll(",?\"timestamp\":\"[^\"]*\"", "")
						.getBytes(StandardCharsets.UTF_8));
		}

		@Bean
		StoredResponseFilter redactSignedUrls() {
			return (request, response) -> {
				if (request.header("X-No-Store") != null) {
					return null;
				}
				Map<String, List<String>> headers = new LinkedHashMap<>(response.headers());
				headers.keySet().removeIf((name) -> name.equalsIgnoreCase("X-Signed-Url"));
				return new CapturedResponse(response.status(), headers, response.body());
			};
		}

		@Bean
		ProblemCustomizer traceIds() {
			return (request, problem, members) -> {
				members.put("traceId", "trace-42");
				members.put("path", request.path());
				members.put("ratio", Double.NaN);
				members.put("title", "Bad key");
				members.put("type", "https://example.com/not-allowed");
				members.put("status", 200);
			};
		}

		@RestController
		static class HooksController {

			@PostMapping("/hooks/pay")
			@Idempotent
			Mono<ResponseEntity<Map<String, Object>>> pay(@RequestBody Map<String, Object> payment) {
				return Mono.fromSupplier(() -> {
					int execution = executions.incrementAndGet();
					return ResponseEntity.status(201)
						.header("X-Signed-Url", "https://files.example/receipt?sig=" + execution)
						.body(Map.of("execution", execution));
				});
			}

			@PostMapping("/hooks/quote")
			@Idempotent
			Mono<ResponseEntity<Map<String, Object>>> quote(@RequestBody Map<String, Object> quote,
					@RequestHeader(name = "X-Ttl-Seconds", required = false) Long ttl,
					@RequestHeader(name = "X-Do-Not-Store", required = false) String doNotStore,
					ServerWebExchange exchange) {
				int execution = executions.incrementAndGet();
				boolean refused = doNotStore != null && ReactiveIdempotentResponse.doNotStore(exchange);
				Mono<Boolean> ttlApplied = (ttl != null) ? ReactiveIdempotentResponse.ttl(Duration.ofSeconds(ttl))
						: Mono.just(false);
				return ttlApplied.map((applied) -> ResponseEntity.status(201)
					.body(Map.of("execution", execution, "ttlApplied", applied, "refused", refused)));
			}

			@PostMapping("/hooks/reused")
			Mono<String> reused() {
				return Mono.error(new IdempotencyKeyReusedException("anonymous"));
			}

		}

	}

}
