package dev.idempo.webflux.storedresponse;

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
import reactor.core.publisher.Mono;

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
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.observation.ServerRequestObservationContext;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stack-neutral {@link StoredResponseFilter} on WebFlux: what the client receives,
 * what a failing filter leaves behind and how it is counted, compared with what Spring
 * MVC does with the same bean.
 *
 * @author idempo
 */
@SpringBootTest(classes = WebFluxStoredResponseFilterHttpTests.FilteredApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempo.store.type=memory", "idempo.lock-ttl=1s" })
class WebFluxStoredResponseFilterHttpTests {

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

	/**
	 * "The client always gets the response the handler produced; only what is replayed
	 * changes" (StoredResponseFilter). On Spring MVC the filter gets a copy of the body;
	 * on WebFlux it gets the very array that is then written to the client, so a filter
	 * that masks in place masks the client's response too.
	 */
	@Test
	void aFilterThatMasksTheBodyInPlaceChangesOnlyWhatIsReplayed() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = post("/review/card", key, "X-Mask", "yes");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(TestHttp.text(first)).as("the client gets what the handler produced").contains("4111111111111111");
		HttpResponse<byte[]> replay = post("/review/card", key, "X-Mask", "yes");
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(TestHttp.text(replay)).doesNotContain("4111111111111111");
	}

	/**
	 * A filter that throws: Spring MVC counts idempo.responses{outcome=store_error}
	 * (IdempotentExecution#settle), WebFlux outcome=not_stored, reason=exception.
	 */
	@Test
	void aFailingFilterIsCountedAsOnSpringMvc() {
		String key = TestHttp.newKey();
		assertThat(post("/review/card", key, "X-Boom", "yes").statusCode()).isEqualTo(201);
		assertThat(this.listener.responses).containsExactly("STORE_ERROR:NONE");
	}

	/**
	 * A filter that throws an Error (an assertion, say) on a response without a body that
	 * the handler completed itself: the client still gets the handler's response, nothing
	 * is stored, the failure is counted as on Spring MVC, and the key is released before
	 * the client has its answer (before, the Error escaped the settle outside the flow's
	 * error handling: the client got a 500, the hold never ended, its lease was renewed
	 * for ever and every retry got 409).
	 */
	@Test
	void anErrorFromAFilterOnABodilessResponseDoesNotKeepTheKeyClaimed() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = post("/review/empty", key, "X-Assert", "yes");
		assertThat(first.statusCode()).as("the handler's response").isEqualTo(204);
		assertThat(this.listener.responses).containsExactly("STORE_ERROR:NONE");
		HttpResponse<byte[]> retry = post("/review/empty", key);
		assertThat(retry.statusCode()).as("the key was released: the retry runs").isEqualTo(204);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
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
	static class FilteredApplication {

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
		StoredResponseFilter maskCardNumbers() {
			return (request, response) -> {
				if (request.header("X-Boom") != null) {
					throw new IllegalStateException("boom");
				}
				if (request.header("X-Assert") != null) {
					throw new AssertionError("assertion in a filter");
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
		static class FilteredController {

			@PostMapping("/review/card")
			@Idempotent
			Mono<ResponseEntity<Map<String, Object>>> card() {
				return Mono.fromSupplier(() -> ResponseEntity.status(201).body(Map.of("card", "4111111111111111")));
			}

			@PostMapping("/review/empty")
			@Idempotent
			Mono<Void> empty(ServerWebExchange exchange) {
				exchange.getResponse().setStatusCode(HttpStatus.NO_CONTENT);
				return Mono.empty();
			}

		}

	}

}
