package dev.idempo.autoconfigure.listener;

import jakarta.jms.ConnectionFactory;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jms.autoconfigure.JmsAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jms.config.DefaultJmsListenerContainerFactory;
import org.springframework.jms.config.SimpleJmsListenerEndpoint;
import org.springframework.jms.listener.DefaultMessageListenerContainer;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.CommonLoggingErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When idempo's listener-container error handling is configured, and when it steps back.
 * What it does on a real broker: {@code dev.idempo.kafka.KafkaErrorHandlingTests},
 * {@code dev.idempo.rabbit.RabbitErrorHandlingTests} and
 * {@code dev.idempo.jms.JmsErrorHandlingTests}.
 *
 * @author idempo
 */
class IdempotencyListenerContainerAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyListenerContainerAutoConfiguration.class,
				KafkaAutoConfiguration.class, RabbitAutoConfiguration.class, JmsAutoConfiguration.class))
		// a JMS connection factory that connects to nothing until a listener starts
		.withBean(ConnectionFactory.class, () -> new ActiveMQConnectionFactory("vm://0"));

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
	void boot_sJmsListenerContainerFactoryCreatesIdempo_sContainersWithBoot_sSettings() {
		this.contextRunner.withPropertyValues("spring.jms.listener.max-concurrency=3").run((context) -> {
			assertThat(context).hasSingleBean(DefaultJmsListenerContainerFactory.class);
			DefaultJmsListenerContainerFactory factory = context.getBean("jmsListenerContainerFactory",
					DefaultJmsListenerContainerFactory.class);
			SimpleJmsListenerEndpoint endpoint = new SimpleJmsListenerEndpoint();
			endpoint.setDestination("payments");
			endpoint.setMessageListener((message) -> {
			});
			DefaultMessageListenerContainer container = factory.createListenerContainer(endpoint);
			assertThat(container).isInstanceOf(IdempotencyJmsContainers.Container.class);
			assertThat(container.getMaxConcurrentConsumers()).isEqualTo(3);
			assertThat(container.isSessionTransacted()).isTrue();
		});
	}

	@Test
	void stepsBackWhenTheApplicationDefinesItsOwnJmsListenerContainerFactory() {
		this.contextRunner.withUserConfiguration(ApplicationJmsContainerFactory.class).run((context) -> {
			assertThat(context).hasSingleBean(DefaultJmsListenerContainerFactory.class);
			assertThat(context.getBean("jmsListenerContainerFactory"))
				.isNotInstanceOf(IdempotencyJmsContainers.ContainerFactory.class);
		});
	}

	@Test
	void aBlankJmsDeadLetterQueueFailsTheStartNamingTheProperty() {
		this.contextRunner.withPropertyValues("idempo.listener.jms.dead-letter-queue= ")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("idempo.listener.jms.dead-letter-queue"));
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
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyListenerContainerAutoConfiguration.class))
			.withBean(ConnectionFactory.class, () -> new ActiveMQConnectionFactory("vm://0"))
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.jms"))
			.run((context) -> assertThat(context).doesNotHaveBean(DefaultJmsListenerContainerFactory.class));
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
				.doesNotHaveBean("idempotencyDirectContainerCustomizer")
				.getBean("jmsListenerContainerFactory")
				.isNotInstanceOf(IdempotencyJmsContainers.ContainerFactory.class));
		this.contextRunner.withPropertyValues("idempo.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(CommonErrorHandler.class)
				.doesNotHaveBean("idempotencySimpleContainerCustomizer"));
	}

	@Configuration(proxyBeanMethods = false)
	static class ApplicationJmsContainerFactory {

		@Bean
		DefaultJmsListenerContainerFactory jmsListenerContainerFactory(ConnectionFactory connectionFactory) {
			DefaultJmsListenerContainerFactory factory = new DefaultJmsListenerContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			return factory;
		}

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
