package dev.idempo.client.chain;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;
import dev.idempo.testsupport.ApplicationProcess;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.util.Assert;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * Service A of the chain proof, run in a JVM of its own ({@link ApplicationProcess}) so
 * that the test can SIGKILL it. {@code POST /orders} is {@code @Idempotent}; its handler
 * charges the order at service B ({@code POST /charges} at {@code chain.b-url}) with a
 * {@code RestClient} from Spring Boot's builder, which carries idempo's client
 * interceptor ({@code idempo.client.enabled=true}), and answers 201 with B's answer.
 * {@code POST /transactional-orders} does the same with {@code transactional = true}. The
 * request header {@value #PAUSE_HEADER} holds the request after B answered and before A
 * stores its own response, forever, after creating {@code <signal-dir>/<reference>} so
 * that the test knows.
 *
 * @author idempo
 */
@SpringBootApplication
public class ChainApplication {

	/** Holds the request after B answered. */
	static final String PAUSE_HEADER = "X-Pause-After-Charge";

	private static final Pattern REFERENCE = Pattern.compile("[A-Za-z0-9-]{1,64}");

	public static void main(String[] args) {
		ApplicationProcess.run(ChainApplication.class, args);
	}

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@RestController
	static class OrdersController {

		private final RestClient charges;

		private final Path signals;

		OrdersController(RestClient.Builder builder, @Value("${chain.b-url}") String chargesUrl,
				@Value("${chain.signal-dir}") Path signals) {
			this.charges = builder.baseUrl(chargesUrl).build();
			this.signals = signals;
		}

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Map<String, Object>> order(@RequestBody Map<String, Object> order,
				@RequestHeader(name = PAUSE_HEADER, required = false) @Nullable String pause) {
			return charge(order, pause);
		}

		/**
		 * The same, in transactional mode: the claim and the record in the transaction
		 * that the kill rolls back.
		 */
		@PostMapping("/transactional-orders")
		@Idempotent(transactional = true)
		ResponseEntity<Map<String, Object>> transactionalOrder(@RequestBody Map<String, Object> order,
				@RequestHeader(name = PAUSE_HEADER, required = false) @Nullable String pause) {
			return charge(order, pause);
		}

		private ResponseEntity<Map<String, Object>> charge(Map<String, Object> order, @Nullable String pause) {
			String reference = String.valueOf(order.get("reference"));
			Assert.isTrue(REFERENCE.matcher(reference).matches(), "bad reference");
			String charge = this.charges.post()
				.uri("/charges")
				.contentType(MediaType.APPLICATION_JSON)
				.header("X-Test-Reference", reference)
				.body("{\"reference\":\"" + reference + "\"}")
				.retrieve()
				.body(String.class);
			if (pause != null) {
				ApplicationProcess.writeAtomically(this.signals.resolve(reference), "charged");
				System.out.println("paused after the charge of " + reference);
				try {
					new CountDownLatch(1).await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
			}
			return ResponseEntity.status(201).body(Map.of("reference", reference, "charge", String.valueOf(charge)));
		}

	}

}
