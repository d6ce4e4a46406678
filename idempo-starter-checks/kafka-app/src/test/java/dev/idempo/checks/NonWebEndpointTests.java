package dev.idempo.checks;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.idempo.IdempotencyTemplate;
import dev.idempo.actuate.IdempotencyEndpoint;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code idempo} Actuator endpoint of a non-web application on exactly the class path
 * the starter and {@code spring-boot-starter-actuator} give it (no servlet class, which
 * the build's enforcer rule checks), exposed over JMX: it reads the record of a key the
 * template completed and evicts it, so that the next call with that key runs again.
 * Before the endpoint needed no servlet class, reading a record threw
 * {@code NoClassDefFoundError: jakarta/servlet/ServletException}.
 *
 * @author idempo
 */
class NonWebEndpointTests {

	@Test
	void theEndpointReadsAndEvictsARecordWithoutTheServletApi() {
		assertThat(ClassUtils.isPresent("jakarta.servlet.ServletException", null)).isFalse();
		SpringApplication application = new SpringApplication(NonWebApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		try (ConfigurableApplicationContext context = application.run("--idempo.store.type=memory",
				"--spring.jmx.enabled=true", "--management.endpoints.jmx.exposure.include=idempo")) {
			IdempotencyEndpoint endpoint = context.getBean(IdempotencyEndpoint.class);
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			AtomicInteger runs = new AtomicInteger();
			assertThat(endpoint.record("refund-1", "template:refunds")).containsEntry("state", "absent");
			template.execute("refunds", "refund-1", runs::incrementAndGet);
			assertThat(endpoint.record("refund-1", "template:refunds")).containsEntry("state", "completed")
				.containsEntry("scope", "template:refunds");
			assertThat(endpoint.record("refund-1", null, "alice", null)).containsEntry("state", "absent")
				.containsEntry("scope", "principal:alice");
			assertThat(endpoint.evict("refund-1", "template:refunds")).containsEntry("evicted", true);
			assertThat(endpoint.record("refund-1", "template:refunds")).containsEntry("state", "absent");
			template.execute("refunds", "refund-1", runs::incrementAndGet);
			assertThat(runs).hasValue(2);
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class NonWebApplication {

	}

}
