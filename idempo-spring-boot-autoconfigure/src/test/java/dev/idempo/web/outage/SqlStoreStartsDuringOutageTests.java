package dev.idempo.web.outage;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.store.jdbc.IdempotencyJdbcSchemaInitializer;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.TestHttp;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application whose SQL database is down when it starts (its URL points at a port
 * where nothing answers yet, with {@code initialize-schema=always}) starts anyway,
 * answers keyed requests 503, and once the database answers (a proxy starts on that port)
 * creates its table and works, without a restart.
 */
abstract class SqlStoreStartsDuringOutageTests {

	abstract TestDatabase database();

	abstract String storeType();

	@Test
	void startsWhileTheDatabaseIsDownAndRecoversWithoutARestart() throws Exception {
		TestDatabase database = database();
		URI real = URI.create(database.url().substring("jdbc:".length()));
		int port = TestRedis.freePort();
		String url = database.url().replaceFirst("//[^/]+/", "//127.0.0.1:" + port + "/");
		String table = "idempo_outage_" + Long.toHexString(System.nanoTime());
		SpringApplication application = new SpringApplication(OutageApplication.class);
		String[] args = { "--server.port=0",
				"--spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
				"--spring.datasource.url=" + url,
				"--spring.datasource.username=" + ((database.username() != null) ? database.username() : ""),
				"--spring.datasource.password=" + ((database.password() != null) ? database.password() : ""),
				"--spring.datasource.hikari.initialization-fail-timeout=-1",
				"--spring.datasource.hikari.connection-timeout=1000", "--idempo.store.type=" + storeType(),
				"--idempo.store.jdbc.table-name=" + table, "--idempo.store.jdbc.initialize-schema=always",
				"--idempo.store.jdbc.timeout=1s" };
		try (ConfigurableApplicationContext context = application.run(args)) {
			IdempotencyJdbcSchemaInitializer schema = context.getBean(IdempotencyJdbcSchemaInitializer.class);
			assertThat(schema.isInitialized()).isFalse();
			int serverPort = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
			TestHttp http = new TestHttp(serverPort);
			String key = TestHttp.newKey();
			HttpResponse<byte[]> down = http.postWithKey("/outage", key, "{\"a\":1}");
			assertThat(down.statusCode()).isEqualTo(503);
			assertThat(down.headers().firstValue("Retry-After")).isPresent();
			try (TcpProxy proxy = TcpProxy.start(port, real.getHost(), real.getPort())) {
				long deadline = System.nanoTime() + 40_000_000_000L;
				while (!schema.isInitialized() && System.nanoTime() < deadline) {
					Thread.onSpinWait();
				}
				assertThat(schema.isInitialized()).as("table created once the database answers").isTrue();
				int status = 0;
				while (System.nanoTime() < deadline) {
					status = http.postWithKey("/outage", key, "{\"a\":1}").statusCode();
					if (status == 201) {
						break;
					}
				}
				assertThat(status).isEqualTo(201);
				assertThat(http.postWithKey("/outage", key, "{\"a\":1}").headers().firstValue("Idempotent-Replayed"))
					.hasValue("true");
			}
		}
		finally {
			database.dropTable(table);
		}
	}

	@SpringBootApplication
	static class OutageApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@RestController
		static class OutageController {

			@PostMapping("/outage")
			@Idempotent
			ResponseEntity<Map<String, String>> create(@RequestBody Map<String, Object> body) {
				return ResponseEntity.status(201).body(Map.of("ok", "yes"));
			}

		}

	}

}
