package dev.idempo.openapi;

import java.util.Map;

import dev.idempo.Idempotent;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application whose OpenAPI document the tests read: idempotent handlers with a
 * placeholder TTL, a required key and a lock-only one, a safe method on an annotated
 * handler, a handler without the annotation, and one an {@code idempo.routes} entry of
 * the test protects.
 */
@SpringBootApplication
public class OpenApiTestApplication {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@RestController
	static class OrdersController {

		@PostMapping("/orders")
		@Idempotent(ttl = "${orders.ttl}")
		ResponseEntity<Map<String, String>> create(@RequestBody Map<String, String> order) {
			return ResponseEntity.status(201).body(order);
		}

		@GetMapping("/orders/{id}")
		@Idempotent
		Map<String, String> get(@PathVariable String id) {
			return Map.of("id", id);
		}

		@PostMapping("/transfers")
		@Idempotent(required = true)
		Map<String, String> transfer(@RequestBody Map<String, String> transfer) {
			return transfer;
		}

		@PostMapping("/receipts")
		@Idempotent(cacheResponse = false)
		ResponseEntity<Map<String, String>> sendReceipt(@RequestBody Map<String, String> receipt) {
			return ResponseEntity.status(201).body(receipt);
		}

		/** Protected by an idempo.routes entry, not by the annotation. */
		@PostMapping("/refunds/{id}")
		Map<String, String> refund(@PathVariable String id, @RequestBody Map<String, String> refund) {
			return refund;
		}

		@PostMapping("/notes")
		Map<String, String> note(@RequestBody Map<String, String> note) {
			return note;
		}

	}

}
