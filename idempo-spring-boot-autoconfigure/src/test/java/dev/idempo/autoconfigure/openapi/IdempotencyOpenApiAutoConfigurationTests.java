package dev.idempo.autoconfigure.openapi;

import org.junit.jupiter.api.Test;
import org.springdoc.core.customizers.GlobalOperationCustomizer;

import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.openapi.IdempotencyOperationCustomizer;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyOpenApiAutoConfiguration}.
 *
 * @author idempo
 */
class IdempotencyOpenApiAutoConfigurationTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyOpenApiAutoConfiguration.class));

	@Test
	void documentsIdempotentOperationsWhenSpringdocIsPresent() {
		this.contextRunner.run((context) -> assertThat(context).hasSingleBean(IdempotencyOperationCustomizer.class));
	}

	@Test
	void backsOffWithoutSpringdoc() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(GlobalOperationCustomizer.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyOperationCustomizer.class));
	}

	@Test
	void backsOffWhenIdempoIsDisabled() {
		this.contextRunner.withPropertyValues("idempo.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyOperationCustomizer.class));
	}

}
