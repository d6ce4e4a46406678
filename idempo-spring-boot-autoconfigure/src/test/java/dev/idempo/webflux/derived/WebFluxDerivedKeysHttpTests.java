package dev.idempo.webflux.derived;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SPEC, "Reactive applications": an {@code @Idempotent} WebFlux handler's execution is in
 * its pipeline's Reactor context, so a {@code WebClient} call it makes (Boot's builder,
 * with {@code idempo.client.enabled=true}) sends a key derived from the request's, and a
 * run of the handler again for the same key (its first run failed with a 500 after the
 * call, as after a crash) sends the same key downstream: the service it calls does not
 * charge twice.
 *
 * @author idempo
 */
@SpringBootTest(classes = WebFluxDerivedKeysHttpTests.PaymentsApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "spring.main.web-application-type=reactive",
				"idempo.store.type=memory", "idempo.client.enabled=true" })
class WebFluxDerivedKeysHttpTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private Downstream downstream;

	@Test
	void aHandlerRunAgainForItsKeySendsTheSameDerivedKeyDownstream() throws Exception {
		String key = UUID.randomUUID().toString();
		assertThat(post("/payments", key).statusCode()).as("the first run fails after its downstream call")
			.isEqualTo(500);
		HttpResponse<String> retry = post("/payments", key);
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
		List<String> sent = this.downstream.keys;
		assertThat(sent).hasSize(2);
		assertThat(sent.get(0)).as("a key was sent").isNotEqualTo("none");
		assertThat(sent.get(1)).as("the re-run sends the same key downstream").isEqualTo(sent.get(0));
		assertThat(sent.get(0)).as("derived from the request's key, not the request's key itself").isNotEqualTo(key);

		String other = UUID.randomUUID().toString();
		assertThat(post("/payments", other).statusCode()).isEqualTo(500);
		assertThat(this.downstream.keys).hasSize(3);
		assertThat(this.downstream.keys.get(2)).as("another request's key derives another key")
			.isNotEqualTo(sent.get(0))
			.isNotEqualTo("none");
	}

	private HttpResponse<String> post(String path, String key) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"amount\":25}"))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	/** The keys the downstream service received, in order. */
	static final class Downstream {

		final List<String> keys = new CopyOnWriteArrayList<>();

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(PaymentsController.class)
	static class PaymentsApplication {

		@Bean
		Downstream downstream() {
			return new Downstream();
		}

		@Bean
		SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class PaymentsController {

		private final WebClient.Builder webClients;

		private final Environment environment;

		private final Downstream downstream;

		private final AtomicInteger runs = new AtomicInteger();

		PaymentsController(WebClient.Builder webClients, Environment environment, Downstream downstream) {
			this.webClients = webClients;
			this.environment = environment;
			this.downstream = downstream;
		}

		/** Calls the bank, then fails on its first run of each key (odd runs). */
		@PostMapping("/payments")
		@Idempotent
		Mono<ResponseEntity<String>> pay() {
			String port = this.environment.getRequiredProperty("local.server.port");
			return this.webClients.build()
				.post()
				.uri("http://127.0.0.1:" + port + "/bank")
				.retrieve()
				.toBodilessEntity()
				.map((answer) -> (this.runs.incrementAndGet() % 2 == 1)
						? ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("crashed after the bank call")
						: ResponseEntity.status(HttpStatus.CREATED).body("paid"));
		}

		@PostMapping("/bank")
		ResponseEntity<Void> bank(@RequestHeader(name = "Idempotency-Key", required = false) String key) {
			this.downstream.keys.add((key != null) ? key : "none");
			return ResponseEntity.ok().build();
		}

	}

}
