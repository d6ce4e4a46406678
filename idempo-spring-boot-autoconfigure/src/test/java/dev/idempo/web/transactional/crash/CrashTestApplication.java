package dev.idempo.web.transactional.crash;

import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;
import dev.idempo.testsupport.ApplicationProcess;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.Assert;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * The payments application of the crash tests. It runs as a separate JVM (see
 * {@link ApplicationProcess}) because what the tests prove is what happens when a whole
 * process dies with SIGKILL: no {@code finally} block, shutdown hook or rollback of the
 * application runs, and the kernel closes its sockets, database connections included. An
 * in-process test cannot do that.
 * <p>
 * {@code POST /payments}, a transactional idempotent handler, inserts one row (the
 * {@code reference} of the JSON body, a fresh execution id and the instance's name) into
 * the business table and answers 201 with the same three values. The request header
 * {@value #PAUSE_HEADER} holds the request forever at a point of its life, after creating
 * the file {@code <signal-dir>/<point>-<reference>} so that the test knows it is there:
 * <ul>
 * <li>{@value #BEFORE_COMMIT}: in the handler, after its insert, before idempo inserts
 * the record and commits;</li>
 * <li>{@value #AFTER_COMMIT}: in {@link TransactionSynchronization#afterCommit()}, which
 * runs after the commit and before idempo's filter lets the held-back response go to the
 * client.</li>
 * </ul>
 * Configuration, as command-line arguments or system properties: the usual
 * {@code spring.datasource.*}, {@code idempo.store.type},
 * {@code idempo.store.jdbc.table-name} and {@code server.port}, plus
 * {@code crash.business-table}, {@code crash.signal-dir} and
 * {@code crash.handler-work-millis} (how long the handler goes on working in its
 * transaction after the insert, as a server-side sleep; 0 by default).
 */
@SpringBootApplication
public class CrashTestApplication {

	/** The request header that holds a request at a point. */
	static final String PAUSE_HEADER = "X-Crash-Pause";

	/** Held after the handler's insert, before the commit. */
	static final String BEFORE_COMMIT = "before-commit";

	/** Held after the commit, before the response is written. */
	static final String AFTER_COMMIT = "after-commit";

	private static final Pattern REFERENCE = Pattern.compile("[A-Za-z0-9-]{1,64}");

	public static void main(String[] args) {
		ApplicationProcess.run(CrashTestApplication.class, args);
	}

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@RestController
	static class PaymentsController {

		private final JdbcTemplate jdbc;

		private final String table;

		private final String instance;

		private final Path signals;

		private final String workSql;

		private final double workSeconds;

		PaymentsController(JdbcTemplate jdbc, @Value("${crash.business-table}") String table,
				@Value("${" + ApplicationProcess.INSTANCE_PROPERTY + "}") String instance,
				@Value("${crash.signal-dir}") Path signals, @Value("${idempo.store.type}") String storeType,
				@Value("${crash.handler-work-millis:0}") int workMillis) {
			Assert.isTrue(table.matches("[A-Za-z0-9_]+"), "bad table name");
			this.jdbc = jdbc;
			this.table = table;
			this.instance = instance;
			this.signals = signals;
			this.workSql = "postgres".equals(storeType) ? "SELECT pg_sleep(?)" : "SELECT SLEEP(?)";
			this.workSeconds = workMillis / 1000.0;
		}

		@PostMapping("/payments")
		@Idempotent(transactional = true)
		ResponseEntity<Map<String, String>> create(@RequestBody Map<String, Object> payment,
				@RequestHeader(name = PAUSE_HEADER, required = false) @Nullable String pause) {
			String reference = String.valueOf(payment.get("reference"));
			Assert.isTrue(REFERENCE.matcher(reference).matches(), "bad reference");
			String execution = UUID.randomUUID().toString();
			this.jdbc.update("INSERT INTO " + this.table + " (reference, execution, instance) VALUES (?, ?, ?)",
					reference, execution, this.instance);
			if (this.workSeconds > 0) {
				// the rest of a real handler's work, in its transaction: a kill then
				// finds
				// transactions under way, not only requests between statements
				this.jdbc.queryForList(this.workSql, this.workSeconds);
			}
			if (BEFORE_COMMIT.equals(pause)) {
				pauseForever(BEFORE_COMMIT, reference);
			}
			if (AFTER_COMMIT.equals(pause)) {
				TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

					@Override
					public void afterCommit() {
						pauseForever(AFTER_COMMIT, reference);
					}

				});
			}
			return ResponseEntity.status(201)
				.body(Map.of("reference", reference, "execution", execution, "instance", this.instance));
		}

		/** Tells the test where the request is, then waits for the SIGKILL. */
		private void pauseForever(String point, String reference) {
			ApplicationProcess.writeAtomically(this.signals.resolve(point + "-" + reference), this.instance);
			System.out.println("paused at " + point + " for " + reference);
			try {
				new CountDownLatch(1).await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while paused at " + point, ex);
			}
		}

	}

}
