package dev.idempo.web.storedresponse;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationView;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.StoredResponseFilter;
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
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The baseline for WebFluxStoredResponseFilterReviewTests: the same stack-neutral
 * {@link StoredResponseFilter} on Spring MVC (these pass).
 *
 * @author idempo
 */
@SpringBootTest(classes = MvcStoredResponseFilterHttpTests.MvcReviewApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempo.store.type=memory")
class MvcStoredResponseFilterHttpTests {

	@Autowired
	Recorder recorder;

	@LocalServerPort
	int port;

	@Autowired
	RecordingListener listener;

	@BeforeEach
	void clear() {
		this.listener.responses.clear();
	}

	private HttpResponse<byte[]> post(String path, String key, String... headers) {
		String[] all = new String[headers.length + 2];
		all[0] = "Idempotency-Key";
		all[1] = key;
		System.arraycopy(headers, 0, all, 2, headers.length);
		return new TestHttp(this.port).post(path, "{}", all);
	}

	@Test
	void aFilterThatMasksTheBodyInPlaceChangesOnlyWhatIsReplayed() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = post("/review/card", key, "X-Mask", "yes");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(TestHttp.text(first)).contains("4111111111111111");
		HttpResponse<byte[]> replay = post("/review/card", key, "X-Mask", "yes");
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(TestHttp.text(replay)).doesNotContain("4111111111111111");
	}

	@Test
	void aFailingFilterIsCountedAsAStoreError() {
		String key = TestHttp.newKey();
		assertThat(post("/review/card", key, "X-Boom", "yes").statusCode()).isEqualTo(201);
		assertThat(this.listener.responses).containsExactly("STORE_ERROR:NONE");
	}

	/**
	 * docs/reactive.md: "idempo.store for each store operation ... nested in the
	 * request's http.server.requests observation". The claim is; the complete that ends
	 * the request is started detached from the request's Reactor context
	 * (ReactiveHold#endOnce), so it is a root observation (a trace of its own).
	 */
	@Test
	void theStoreOperationThatEndsARequestIsNestedInItsObservation() {
		this.recorder.stopped.clear();
		assertThat(post("/review/card", TestHttp.newKey()).statusCode()).isEqualTo(201);
		List<Observation.Context> completes = awaitStore("complete");
		assertThat(completes).hasSize(1);
		assertThat(insideServerRequest(completes.get(0))).as("nested in the server request's observation").isTrue();
		List<Observation.Context> claims = awaitStore("claim");
		assertThat(claims).hasSize(1);
		assertThat(insideServerRequest(claims.get(0))).isTrue();
	}

	private List<Observation.Context> awaitStore(String operation) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (store(operation).isEmpty() && System.nanoTime() < deadline) {
			Thread.onSpinWait();
		}
		return store(operation);
	}

	private List<Observation.Context> store(String operation) {
		return this.recorder.stopped.stream()
			.filter((context) -> "idempo.store".equals(context.getName()))
			.filter((context) -> operation.equals(context.getLowCardinalityKeyValue("operation").getValue()))
			.toList();
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

	/**
	 * Spring MVC's web flow reports through the source-less
	 * {@code onResponse(ResponseOutcome, NotStoredReason)}, WebFlux's through the
	 * {@code Source} one (pre-existing; a listener overriding only the latter never hears
	 * of Spring MVC responses).
	 */
	static class RecordingListener implements IdempotencyListener {

		final List<String> responses = new CopyOnWriteArrayList<>();

		@Override
		public void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
			this.responses.add(outcome.name() + ":" + reason.name());
		}

	}

	@SpringBootApplication
	static class MvcReviewApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
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
		StoredResponseFilter maskCardNumbers() {
			return (request, response) -> {
				if (request.header("X-Boom") != null) {
					throw new IllegalStateException("boom");
				}
				if (request.header("X-Mask") != null) {
					byte[] body = response.body();
					for (int i = 0; i < body.length; i++) {
						if (body[i] >= '0' && body[i] <= '9') {
							body[i] = '#';
						}
					}
				}
				return response;
			};
		}

		@RestController
		static class ReviewController {

			@PostMapping("/review/card")
			@Idempotent
			ResponseEntity<Map<String, Object>> card() {
				return ResponseEntity.status(201).body(Map.of("card", "4111111111111111"));
			}

		}

	}

}
