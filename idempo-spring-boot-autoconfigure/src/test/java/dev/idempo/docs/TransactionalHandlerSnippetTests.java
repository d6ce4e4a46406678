package dev.idempo.docs;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.idempo.docs.TransactionalPaymentsController.Payments;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.web.TestHttp;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's transactional handler, run on PostgreSQL: the application starts with it
 * (a transactional handler on a store that cannot run it would not), the payment row
 * commits once, and a retry replays the committed response.
 */
@SpringBootTest(classes = TransactionalHandlerSnippetTests.Application.class,
		webEnvironment = WebEnvironment.RANDOM_PORT)
@DirtiesContext
class TransactionalHandlerSnippetTests {

	private static final String RECORDS = SqlStoreProperties.randomTable();

	private static final String PAYMENTS = SqlStoreProperties.randomTable();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.postgres(), "postgres", RECORDS);
		registry.add("docs.payments-table", () -> PAYMENTS);
	}

	@BeforeAll
	static void createPayments() {
		TestDatabases.postgres()
			.jdbc()
			.execute("CREATE TABLE " + PAYMENTS
					+ " (id VARCHAR(40) PRIMARY KEY, amount DECIMAL(12, 2) NOT NULL, recipient VARCHAR(100))");
	}

	@AfterAll
	static void dropTables() {
		TestDatabases.postgres().dropTable(PAYMENTS);
		TestDatabases.postgres().dropTable(RECORDS);
	}

	@Test
	void aRetryReplaysTheCommittedPayment() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		String body = "{\"amount\":25.00,\"recipient\":\"alice\"}";
		HttpResponse<byte[]> first = http.post("/payments", body, "Idempotency-Key", key);
		HttpResponse<byte[]> retry = http.post("/payments", body, "Idempotency-Key", key);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(TestDatabases.postgres().jdbc().queryForObject("SELECT count(*) FROM " + PAYMENTS, Integer.class))
			.isOne();
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(TransactionalPaymentsController.class)
	static class Application {

		@Bean
		Payments payments(JdbcTemplate jdbc, @Value("${docs.payments-table}") String table) {
			return new Payments(jdbc, table);
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

}
