package dev.idempo.checks;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.idempo.IdempotencyTemplate;
import dev.idempo.Idempotent;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A non-web application started on exactly the class path the starter gives it (the
 * build's enforcer rule has already checked that no servlet or Spring MVC jar is on it):
 * idempo's auto-configuration starts, and idempotent methods and the template run once
 * per key.
 *
 * @author idempo
 */
class NonWebApplicationTests {

	@Test
	void idempotentMethodsAndTheTemplateWorkWithoutSpringMvc() {
		assertThat(ClassUtils.isPresent("org.springframework.web.servlet.DispatcherServlet", null)).isFalse();
		assertThat(ClassUtils.isPresent("jakarta.servlet.Servlet", null)).isFalse();
		SpringApplication application = new SpringApplication(NonWebApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		try (ConfigurableApplicationContext context = application.run()) {
			Payments payments = context.getBean(Payments.class);
			assertThat(payments.pay("order-1")).isEqualTo(1);
			assertThat(payments.pay("order-1")).isEqualTo(1);
			assertThat(payments.pay("order-2")).isEqualTo(2);
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			AtomicInteger runs = new AtomicInteger();
			template.execute("refunds", "refund-1", () -> runs.incrementAndGet());
			template.execute("refunds", "refund-1", () -> runs.incrementAndGet());
			assertThat(runs).hasValue(1);
		}
	}

	@SpringBootApplication
	static class NonWebApplication {

		@Bean
		Payments payments() {
			return new Payments();
		}

	}

	static class Payments {

		private final AtomicInteger executions = new AtomicInteger();

		@Idempotent(key = "#orderId")
		public int pay(String orderId) {
			return this.executions.incrementAndGet();
		}

	}

}
