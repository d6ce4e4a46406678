package dev.idempo.autoconfigure.actuate;

import org.junit.jupiter.api.Test;

import dev.idempo.actuate.IdempotencyStoreHealthIndicator;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyHealthAutoConfiguration}.
 *
 * @author idempo
 */
class IdempotencyHealthAutoConfigurationTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyHealthAutoConfiguration.class));

	@Test
	void contributesTheStoreHealthAsIdempo() {
		this.contextRunner.run((context) -> assertThat(context).hasSingleBean(IdempotencyStoreHealthIndicator.class)
			.hasBean("idempoHealthIndicator"));
	}

	@Test
	void backsOffWhenDisabledOrWithoutHealthSupport() {
		this.contextRunner.withPropertyValues("management.health.idempo.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyStoreHealthIndicator.class));
		this.contextRunner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(IdempotencyStoreHealthIndicator.class));
	}

}
