package dev.idempo.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.chaos.History.Execution;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.testsupport.ApplicationProcess;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.context.ConfigurationPropertiesAutoConfiguration;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.servlet.autoconfigure.HttpEncodingAutoConfiguration;
import org.springframework.boot.tomcat.autoconfigure.servlet.TomcatServletWebServerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.error.ErrorMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.util.Assert;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The application of the chaos test, run as several JVMs ({@link ApplicationProcess})
 * that share one store. Both handlers answer the status the request asks for (201, 200,
 * 202 or 451, all stored) with a JSON body of the requested size, made of the key, a
 * fresh execution id, the incarnation's name and random padding (so that two executions
 * never answer alike), and the headers {@value History#EXECUTION_HEADER}, a random
 * {@code X-Chaos-Tag} and {@code Location}. Each records its execution durably, with the
 * exact response it returns:
 * <ul>
 * <li>{@code POST /chaos/effects}, {@code @Idempotent}: in the incarnation's
 * {@link EffectLog}, forced to disk in the middle of the handler's work (so that kills
 * find executions whose effect happened but whose response was not stored yet), and a
 * marker of what idempo reported about storing it;</li>
 * <li>{@code POST /chaos/payments}, {@code @Idempotent(transactional = true)}, present
 * when {@code chaos.business-table} is set (SQL stores): as a row of that table, inserted
 * in idempo's transaction, followed by some work in the same transaction.</li>
 * </ul>
 * A database error in a handler is answered 503 with {@code Retry-After}, as a real
 * application would; any 500 is a failure of the test. It imports only the
 * auto-configurations it needs (web server, MVC, Jackson, JDBC and transactions, Redis,
 * idempo's), which halves a JVM's start-up work: on two cores every kill is followed by a
 * start. Configuration: {@code chaos.effect-dir} and the usual {@code idempo.*},
 * {@code spring.data.redis.*} and {@code spring.datasource.*} properties.
 *
 * @author idempo
 */
@SpringBootConfiguration
@ImportAutoConfiguration({ PropertyPlaceholderAutoConfiguration.class, ConfigurationPropertiesAutoConfiguration.class,
		TomcatServletWebServerAutoConfiguration.class, DispatcherServletAutoConfiguration.class,
		WebMvcAutoConfiguration.class, ErrorMvcAutoConfiguration.class, HttpEncodingAutoConfiguration.class,
		HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
		DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
		JdbcTemplateAutoConfiguration.class, TransactionAutoConfiguration.class, IdempotencyAutoConfiguration.class })
@Import({ ChaosApplication.EffectsController.class, ChaosApplication.PaymentsController.class,
		ChaosApplication.DatabaseErrors.class })
public class ChaosApplication {

	/**
	 * The request attribute with the {@link System#nanoTime()} the request arrived at.
	 */
	static final String RECEIVED_AT = "chaos.received-at";

	private static final ThreadLocal<@Nullable String[]> CURRENT_EXECUTION = new ThreadLocal<>();

	public static void main(String[] args) {
		ApplicationProcess.run(ChaosApplication.class, args);
	}

	@Bean
	EffectLog effectLog(@Value("${chaos.effect-dir}") Path directory,
			@Value("${" + ApplicationProcess.INSTANCE_PROPERTY + "}") String incarnation) {
		return new EffectLog(directory, incarnation);
	}

	/**
	 * Outside every other filter: notes when the request arrived, before idempo's claim,
	 * and gives the request thread a place for the id of the execution it runs, which the
	 * {@link #storedMarkers(EffectLog) listener} reads.
	 */
	@Bean
	FilterRegistrationBean<OncePerRequestFilter> receivedAtFilter() {
		FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(
				new OncePerRequestFilter() {

					@Override
					protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
							FilterChain chain) throws ServletException, IOException {
						request.setAttribute(RECEIVED_AT, System.nanoTime());
						CURRENT_EXECUTION.set(new String[1]);
						try {
							chain.doFilter(request, response);
						}
						finally {
							CURRENT_EXECUTION.remove();
						}
					}

				});
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
		return registration;
	}

	/**
	 * Writes the marker of a non-transactional execution: idempo calls it on the request
	 * thread once the store has answered, before the response leaves.
	 */
	@Bean
	IdempotencyListener storedMarkers(EffectLog effects) {
		return new IdempotencyListener() {

			@Override
			public void onResponse(ResponseOutcome outcome, NotStoredReason reason) {
				@Nullable String[] current = CURRENT_EXECUTION.get();
				String execution = (current != null) ? current[0] : null;
				if (execution != null) {
					effects.marker(execution, outcome.name());
				}
			}

		};
	}

	/** What a handler answers, and records as its effect. */
	record Response(Execution execution) {

		static Response of(Map<String, Object> request, String incarnation, long receivedAt, long startedAt,
				boolean transactional) {
			String key = String.valueOf(request.get("key"));
			Assert.isTrue(key.matches("[A-Za-z0-9-]{1,64}"), "bad key");
			int status = ((Number) request.get("status")).intValue();
			Assert.isTrue(status == 200 || status == 201 || status == 202 || status == 451, "bad status");
			int size = ((Number) request.get("size")).intValue();
			Assert.isTrue(size >= 0 && size <= 64 * 1024, "bad size");
			String id = UUID.randomUUID().toString();
			Map<String, String> headers = new LinkedHashMap<>();
			headers.put(HttpHeaders.CONTENT_TYPE, "application/json");
			headers.put(History.EXECUTION_HEADER, id);
			headers.put("X-Chaos-Tag", HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()));
			headers.put(HttpHeaders.LOCATION, "/chaos/effects/" + id);
			// compressible padding, so that larger responses are stored compressed
			StringBuilder padding = new StringBuilder(size);
			for (int i = 0; i < size; i++) {
				padding.append((char) ('a' + ThreadLocalRandom.current().nextInt(4)));
			}
			byte[] body = ("{\"key\":\"" + key + "\",\"execution\":\"" + id + "\",\"instance\":\"" + incarnation
					+ "\",\"status\":" + status + ",\"padding\":\"" + padding + "\"}")
				.getBytes(StandardCharsets.UTF_8);
			return new Response(new Execution(key, id, incarnation, transactional, receivedAt, startedAt, status,
					headers, body, null));
		}

		ResponseEntity<byte[]> entity() {
			ResponseEntity.BodyBuilder builder = ResponseEntity.status(this.execution.status());
			// the names as the handler sets them; History keeps them in lower case
			builder.header(HttpHeaders.CONTENT_TYPE, "application/json");
			builder.header("X-Chaos-Execution", this.execution.id());
			builder.header("X-Chaos-Tag", this.execution.headers().get("x-chaos-tag"));
			builder.header(HttpHeaders.LOCATION, this.execution.headers().get("location"));
			return builder.body(this.execution.body());
		}

	}

	/**
	 * Work that takes a while, so that kills and restarts land inside handlers; it shapes
	 * the load and orders nothing.
	 */
	static void work(int maxMillis) {
		LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextInt(maxMillis + 1)));
	}

	@RestController
	static class EffectsController {

		private final EffectLog effects;

		private final String incarnation;

		EffectsController(EffectLog effects,
				@Value("${" + ApplicationProcess.INSTANCE_PROPERTY + "}") String incarnation) {
			this.effects = effects;
			this.incarnation = incarnation;
		}

		@PostMapping("/chaos/effects")
		@Idempotent
		ResponseEntity<byte[]> effect(@RequestBody Map<String, Object> request,
				@RequestAttribute(RECEIVED_AT) long receivedAt) {
			long startedAt = System.nanoTime();
			work(5);
			Response response = Response.of(request, this.incarnation, receivedAt, startedAt, false);
			this.effects.execution(response.execution());
			@Nullable String[] current = CURRENT_EXECUTION.get();
			if (current != null) {
				current[0] = response.execution().id();
			}
			work(30);
			return response.entity();
		}

	}

	@RestController
	@ConditionalOnProperty("chaos.business-table")
	static class PaymentsController {

		private final JdbcTemplate jdbc;

		private final String table;

		private final String incarnation;

		private final String workSql;

		PaymentsController(JdbcTemplate jdbc, @Value("${chaos.business-table}") String table,
				@Value("${" + ApplicationProcess.INSTANCE_PROPERTY + "}") String incarnation,
				@Value("${idempo.store.type}") String storeType) {
			Assert.isTrue(table.matches("[A-Za-z0-9_]+"), "bad table name");
			this.jdbc = jdbc;
			this.table = table;
			this.incarnation = incarnation;
			this.workSql = "postgres".equals(storeType) ? "SELECT pg_sleep(?)" : "SELECT SLEEP(?)";
		}

		@PostMapping("/chaos/payments")
		@Idempotent(transactional = true)
		ResponseEntity<byte[]> payment(@RequestBody Map<String, Object> request,
				@RequestAttribute(RECEIVED_AT) long receivedAt) {
			Response response = Response.of(request, this.incarnation, receivedAt, System.nanoTime(), true);
			Execution execution = response.execution();
			StringBuilder headers = new StringBuilder();
			execution.headers().forEach((name, value) -> headers.append(name).append(": ").append(value).append('\n'));
			this.jdbc.update(
					"INSERT INTO " + this.table
							+ " (idem_key, execution, instance, status, headers, body) VALUES (?, ?, ?, ?, ?, ?)",
					execution.key(), execution.id(), this.incarnation, execution.status(), headers.toString(),
					new String(execution.body(), StandardCharsets.UTF_8));
			// the rest of the handler's work, in its transaction, so that kills and
			// restarts find transactions under way
			this.jdbc.queryForList(this.workSql, ThreadLocalRandom.current().nextInt(21) / 1000.0);
			return response.entity();
		}

	}

	@RestControllerAdvice
	static class DatabaseErrors {

		/** The database is restarting: a retry will do, as for idempo's own 503. */
		@ExceptionHandler(DataAccessException.class)
		ResponseEntity<ProblemDetail> unavailable(DataAccessException ex) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
					"database unavailable: " + ex.getClass().getSimpleName());
			return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
				.header(HttpHeaders.RETRY_AFTER, "1")
				.body(problem);
		}

	}

}
