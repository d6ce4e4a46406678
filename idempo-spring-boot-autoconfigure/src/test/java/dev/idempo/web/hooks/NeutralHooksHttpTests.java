package dev.idempo.web.hooks;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.core.CapturedResponse;
import dev.idempo.core.FingerprintStrategy;
import dev.idempo.core.ProblemCustomizer;
import dev.idempo.core.StoredResponseFilter;
import dev.idempo.web.TestHttp;

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
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stack-neutral hooks ({@link FingerprintStrategy}, {@link StoredResponseFilter},
 * {@link ProblemCustomizer}) on Spring MVC, with no servlet-typed hook declared: the same
 * beans as a WebFlux application's serve a servlet one.
 *
 * @author idempo
 */
@SpringBootTest(classes = NeutralHooksHttpTests.NeutralHooksApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT)
class NeutralHooksHttpTests {

	static final AtomicInteger executions = new AtomicInteger();

	@LocalServerPort
	int port;

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
		assertThat(post("/neutral/pay", key, "{\"amount\":5,\"timestamp\":\"10:00:01\"}").statusCode()).isEqualTo(201);
		HttpResponse<byte[]> retry = post("/neutral/pay", key, "{\"amount\":5,\"timestamp\":\"10:00:07\"}");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(post("/neutral/pay", key, "{\"amount\":6,\"timestamp\":\"10:00:09\"}").statusCode()).isEqualTo(422);
	}

	/**
	 * A form's body reaches the strategy as the canonical bytes of its parameters, as on
	 * WebFlux: were it the (already parsed, so empty) body, another amount would replay.
	 */
	@Test
	void fingerprintStrategyGetsAFormsCanonicalBytes() {
		String key = TestHttp.newKey();
		assertThat(postForm(key, "amount=5&note=a").statusCode()).isEqualTo(201);
		assertThat(postForm(key, "note=a&amount=5").headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(postForm(key, "amount=6&note=a").statusCode()).isEqualTo(422);
	}

	private HttpResponse<byte[]> postForm(String key, String form) {
		TestHttp http = new TestHttp(this.port);
		return http.send(http.request("POST", "/neutral/form", form, "Idempotency-Key", key)
			.setHeader("Content-Type", "application/x-www-form-urlencoded"));
	}

	@Test
	void responseFilterRedactsWhatIsReplayedAndMayRefuseToStore() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = post("/neutral/pay", key, "{\"amount\":1}");
		assertThat(first.headers().firstValue("X-Signed-Url")).isPresent();
		HttpResponse<byte[]> replay = post("/neutral/pay", key, "{\"amount\":1}");
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("X-Signed-Url")).isEmpty();
		String refused = TestHttp.newKey();
		int before = executions.get();
		post("/neutral/pay", refused, "{\"amount\":2}", "X-No-Store", "yes");
		HttpResponse<byte[]> again = post("/neutral/pay", refused, "{\"amount\":2}", "X-No-Store", "yes");
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(executions.get() - before).isEqualTo(2);
	}

	@Test
	void problemCustomizerAddsMembersButNotItsTypeOrStatus() {
		HttpResponse<byte[]> invalid = new TestHttp(this.port).post("/neutral/pay", "{\"amount\":1}", "Idempotency-Key",
				"");
		assertThat(invalid.statusCode()).isEqualTo(400);
		assertThat(TestHttp.text(invalid)).contains("\"traceId\":\"trace-7\"")
			.contains("\"type\":\"https://idempo.dev/problems/invalid-key\"")
			.contains("\"status\":400")
			.contains("\"path\":\"/neutral/pay\"");
	}

	@SpringBootApplication
	static class NeutralHooksApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
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
				members.put("traceId", "trace-7");
				members.put("path", request.path());
				members.put("type", "https://example.com/not-allowed");
				members.put("status", 200);
			};
		}

		@RestController
		static class NeutralHooksController {

			@PostMapping("/neutral/pay")
			@Idempotent
			ResponseEntity<Map<String, Object>> pay(@RequestBody Map<String, Object> payment) {
				int execution = executions.incrementAndGet();
				return ResponseEntity.status(201)
					.header("X-Signed-Url", "https://files.example/receipt?sig=" + execution)
					.body(Map.of("execution", execution));
			}

			@PostMapping("/neutral/form")
			@Idempotent
			ResponseEntity<Map<String, Object>> form(@RequestParam int amount) {
				return ResponseEntity.status(201).body(Map.of("execution", executions.incrementAndGet()));
			}

		}

	}

}
