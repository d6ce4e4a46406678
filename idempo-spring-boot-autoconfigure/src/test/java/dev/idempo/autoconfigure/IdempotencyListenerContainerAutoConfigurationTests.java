package dev.idempo.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.CommonLoggingErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When idempo's listener-container error handling is configured, and when it steps back.
 * What it does on a real broker: {@code dev.idempo.kafka.KafkaErrorHandlingTests} and
 * {@code dev.idempo.rabbit.RabbitErrorHandlingTests}.
 *
 * @author idempo
 */
class IdempotencyListenerContainerAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyListenerContainerAutoConfiguration.class,
				KafkaAutoConfiguration.class, RabbitAutoConfiguration.class));

	@Test
	void configuresAKafkaErrorHandlerAndRabbitContainerCustomizers() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(CommonErrorHandler.class);
			assertThat(context).getBean("idempotencyKafkaErrorHandler").isInstanceOf(DefaultErrorHandler.class);
			assertThat(context).hasBean("idempotencySimpleContainerCustomizer");
			assertThat(context).hasBean("idempotencyDirectContainerCustomizer");
		});
	}

	@Test
	void boot_sRabbitListenerContainerFactoryUsesTheCustomizer() {
		this.contextRunner.run((context) -> {
			SimpleRabbitListenerContainerFactory factory = context.getBean(SimpleRabbitListenerContainerFactory.class);
			SimpleMessageListenerContainer container = factory.createListenerContainer();
			assertThat(container.getErrorHandler())
				.isInstanceOf(org.springframework.amqp.rabbit.listener.ConditionalRejectingErrorHandler.class);
		});
	}

	@Test
	void stepsBackWhenTheApplicationDefinesAnErrorHandler() {
		this.contextRunner.withUserConfiguration(ApplicationErrorHandling.class).run((context) -> {
			assertThat(context).hasSingleBean(CommonErrorHandler.class);
			assertThat(context).doesNotHaveBean("idempotencyKafkaErrorHandler");
			assertThat(context).doesNotHaveBean("idempotencySimpleContainerCustomizer");
			// the application only customizes simple containers: direct ones are still
			// idempo's
			assertThat(context).hasBean("idempotencyDirectContainerCustomizer");
		});
	}

	@Test
	void needsEachLibrary() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.kafka"))
			.run((context) -> assertThat(context).doesNotHaveBean(CommonErrorHandler.class)
				.hasBean("idempotencySimpleContainerCustomizer"));
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.amqp"))
			.run((context) -> assertThat(context).doesNotHaveBean("idempotencySimpleContainerCustomizer")
				.hasBean("idempotencyKafkaErrorHandler"));
	}

	@Test
	void needsBoot_sModuleOfEachLibrary() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyListenerContainerAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.kafka", "org.springframework.boot.amqp"))
			.run((context) -> assertThat(context).doesNotHaveBean("idempotencyKafkaErrorHandler")
				.doesNotHaveBean("idempotencySimpleContainerCustomizer"));
	}

	@Test
	void canBeTurnedOff() {
		this.contextRunner.withPropertyValues("idempo.listener.error-handling.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(CommonErrorHandler.class)
				.doesNotHaveBean("idempotencySimpleContainerCustomizer")
				.doesNotHaveBean("idempotencyDirectContainerCustomizer"));
		this.contextRunner.withPropertyValues("idempo.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(CommonErrorHandler.class)
				.doesNotHaveBean("idempotencySimpleContainerCustomizer"));
	}

	@Configuration(proxyBeanMethods = false)
	static class ApplicationErrorHandling {

		@Bean
		CommonErrorHandler applicationErrorHandler() {
			return new CommonLoggingErrorHandler();
		}

		@Bean
		ContainerCustomizer<SimpleMessageListenerContainer> applicationContainerCustomizer() {
			return (container) -> {
			};
		}

	}

}
