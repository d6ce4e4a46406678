package dev.idempo.web.pool;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application whose idempotent handler itself queries the database through the
 * application's (small) connection pool, as real handlers do.
 *
 * @author idempo
 */
@SpringBootApplication
public class PoolStarvationApplication {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@RestController
	static class OrdersController {

		final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

		private final JdbcTemplate jdbc;

		private final String query;

		OrdersController(JdbcTemplate jdbc, @Value("${test.handler-query}") String query) {
			this.jdbc = jdbc;
			this.query = query;
		}

		@PostMapping("/orders")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Map<String, Object> create(@RequestHeader("Idempotency-Key") String key,
				@RequestBody Map<String, Object> order) {
			int execution = this.executions.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			// borrows a pooled connection for a few milliseconds, like any handler
			this.jdbc.queryForList(this.query);
			return Map.of("id", UUID.randomUUID().toString(), "item", order.get("item"), "execution", execution);
		}

	}

}
