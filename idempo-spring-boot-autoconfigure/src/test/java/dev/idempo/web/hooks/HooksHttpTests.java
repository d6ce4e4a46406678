package dev.idempo.web.hooks;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.core.CapturedResponse;
import dev.idempo.store.LockingStore;
import dev.idempo.store.RecordState;
import dev.idempo.web.IdempotencyProblemCustomizer;
import dev.idempo.web.IdempotentResponse;
import dev.idempo.web.IdempotentResponseFilter;
import dev.idempo.web.RequestFingerprint;
import dev.idempo.web.RequestFingerprintStrategy;
import dev.idempo.web.TestHttp;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hooks a Spring team uses to shape idempotency without forking it: what is
 * fingerprinted, what is stored, how problems read, and a handler's say over its own
 * response's TTL and storing.
 */
@SpringBootTest(classes = HooksHttpTests.HooksApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class HooksHttpTests {

	static final AtomicInteger executions = new AtomicInteger();

	@LocalServerPort
	int port;

	@Autowired
	LockingStore store;

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
		String refused = TestHttp.newKey();
		int before = executions.get();
		post("/hooks/pay", refused, "{\"amount\":2}", "X-No-Store", "yes");
		HttpResponse<byte[]> again = post("/hooks/pay", refused, "{\"amount\":2}", "X-No-Store", "yes");
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(executions.get() - before).isEqualTo(2);
	}

	@Test
	void handlerSetsItsResponsesTtlOrOptsOutOfStoring() {
		String key = TestHttp.newKey();
		assertThat(post("/hooks/quote", key, "{\"amount\":1}", "X-Ttl-Seconds", "90").statusCode()).isEqualTo(201);
		RecordState state = this.store.inspect(RequestFingerprint.storageKey("anonymous", key));
		assertThat(state.expiresAt()).isBetween(Instant.now().plusSeconds(30), Instant.now().plusSeconds(120));
		String once = TestHttp.newKey();
		int before = executions.get();
		post("/hooks/quote", once, "{\"amount\":1}", "X-Do-Not-Store", "yes");
		assertThat(post("/hooks/quote", once, "{\"amount\":1}", "X-Do-Not-Store", "yes").headers()
			.firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(executions.get() - before).isEqualTo(2);
	}

	@Test
	void problemCustomizerAddsMembersButNotItsTypeOrStatus() {
		HttpResponse<byte[]> invalid = new TestHttp(this.port).post("/hooks/pay", "{\"amount\":1}", "Idempotency-Key",
				"");
		assertThat(invalid.statusCode()).isEqualTo(400);
		String body = TestHttp.text(invalid);
		assertThat(body).contains("\"traceId\":\"trace-42\"")
			.contains("\"type\":\"https://idempo.dev/problems/invalid-key\"")
			.contains("\"status\":400")
			.contains("\"title\":\"Bad key\"")
			.contains("\"ratio\":\"NaN\"");
	}

	@SpringBootApplication
	static class HooksApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@Bean
		RequestFingerprintStrategy withoutTimestamp() {
			return (request, body) -> RequestFingerprintStrategy.DEFAULT.fingerprint(request,
					new String(body, java.nio.charset.StandardCharsets.UTF_8)
						.replaceAll(",?\"timestamp\":\"[^\"]*\"", "")
						.getBytes(java.nio.charset.StandardCharsets.UTF_8));
		}

		@Bean
		IdempotentResponseFilter redactSignedUrls() {
			return (request, response) -> {
				if (request.getHeader("X-No-Store") != null) {
					return null;
				}
				Map<String, List<String>> headers = new LinkedHashMap<>(response.headers());
				headers.keySet().removeIf((name) -> name.equalsIgnoreCase("X-Signed-Url"));
				return new CapturedResponse(response.status(), headers, response.body());
			};
		}

		@Bean
		IdempotencyProblemCustomizer traceIds() {
			return (request, problem, members) -> {
				members.put("traceId", "trace-42");
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
			ResponseEntity<Map<String, Object>> pay(@RequestBody Map<String, Object> payment) {
				int execution = executions.incrementAndGet();
				return ResponseEntity.status(201)
					.header("X-Signed-Url", "https://files.example/receipt?sig=" + execution)
					.body(Map.of("execution", execution));
			}

			@PostMapping("/hooks/quote")
			@Idempotent
			ResponseEntity<Map<String, Object>> quote(@RequestBody Map<String, Object> quote,
					@RequestHeader(name = "X-Ttl-Seconds", required = false) Long ttl,
					@RequestHeader(name = "X-Do-Not-Store", required = false) String doNotStore,
					HttpServletResponse response) {
				int execution = executions.incrementAndGet();
				if (ttl != null) {
					assertThat(IdempotentResponse.ttl(Duration.ofSeconds(ttl))).isTrue();
				}
				if (doNotStore != null) {
					assertThat(IdempotentResponse.doNotStore()).isTrue();
				}
				return ResponseEntity.status(201).body(Map.of("execution", execution));
			}

		}

	}

}
