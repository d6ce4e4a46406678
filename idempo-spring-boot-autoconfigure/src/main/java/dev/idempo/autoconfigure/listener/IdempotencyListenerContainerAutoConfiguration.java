package dev.idempo.autoconfigure.listener;

import java.time.Duration;
import java.util.function.Function;

import jakarta.jms.ConnectionFactory;

import dev.idempo.autoconfigure.IdempotencyProperties;

import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jms.autoconfigure.DefaultJmsListenerContainerFactoryConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jms.config.DefaultJmsListenerContainerFactory;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of listener containers that never spin on idempo's exceptions: with
 * Spring Kafka, a {@link DefaultErrorHandler} for Spring Boot's container factory; with
 * Spring AMQP, a container customizer for each of Boot's container factories; with Spring
 * JMS, Boot's {@code jmsListenerContainerFactory}, configured by Boot's configurer but
 * creating {@link IdempotencyJmsContainers.Container idempo's containers}. Each steps
 * back when the application defines its own (a {@link CommonErrorHandler} bean, a
 * {@link ContainerCustomizer} bean of the container type, a bean named
 * {@code jmsListenerContainerFactory}), and
 * {@code idempo.listener.error-handling.enabled=false} turns all of them off.
 * <p>
 * What they do: a delivery that fails with {@code IdempotencyKeyReusedException} is not
 * redelivered (the recoverer gets it; RabbitMQ rejects it without requeue, so a
 * dead-letter exchange receives it; JMS sends it to the dead-letter queue and
 * acknowledges it); one that fails with {@code IdempotencyInProgressException} is retried
 * after a growing back-off for as long as {@code idempo.lock-ttl}, and then redelivered
 * for another such round, so that the duplicate ends as a replay once the first delivery
 * completes, and runs if that one failed.
 *
 * @author idempo
 */
@AutoConfiguration(
		beforeName = { "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration",
				"org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration",
				"org.springframework.boot.jms.autoconfigure.JmsAutoConfiguration" },
		// the JMS connection factory's auto-configurations: its container factory needs
		// one
		afterName = { "org.springframework.boot.artemis.autoconfigure.ArtemisAutoConfiguration",
				"org.springframework.boot.activemq.autoconfigure.ActiveMQAutoConfiguration",
				"org.springframework.boot.jms.autoconfigure.JndiConnectionFactoryAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "idempo.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
public final class IdempotencyListenerContainerAutoConfiguration {

	/** The property that turns idempo's listener error handling off. */
	static final String ENABLED_PROPERTY = "idempo.listener.error-handling.enabled";

	private static final long FIRST_RETRY_MILLIS = 100;

	private static final long LONGEST_RETRY_MILLIS = 2000;

	/**
	 * The back-off of a delivery that met its key in progress: from 100 ms, growing by
	 * half each time, at most 2 s apart, for as long as the lock TTL in total. The
	 * intervals stay short so that the duplicate replays soon after the first delivery
	 * completes, and so that a Kafka consumer polls again well within
	 * {@code max.poll.interval.ms}.
	 * @param lockTtl how long the first delivery may hold its key
	 * @return the back-off
	 */
	static BackOff inProgressBackOff(Duration lockTtl) {
		long total = Math.max(lockTtl.toMillis(), FIRST_RETRY_MILLIS);
		ExponentialBackOff backOff = new ExponentialBackOff(FIRST_RETRY_MILLIS, 1.5);
		backOff.setMaxInterval(Math.min(LONGEST_RETRY_MILLIS, total));
		backOff.setMaxElapsedTime(total);
		return backOff;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.kafka.listener.DefaultErrorHandler",
			"org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration" })
	@ConditionalOnBooleanProperty(name = ENABLED_PROPERTY, matchIfMissing = true)
	static class KafkaErrorHandlerConfiguration {

		@Bean
		@ConditionalOnMissingBean(CommonErrorHandler.class)
		DefaultErrorHandler idempotencyKafkaErrorHandler(IdempotencyProperties properties,
				ObjectProvider<ConsumerRecordRecoverer> recoverer) {
			return IdempotencyKafkaErrorHandlers.create(properties.getLockTtl(), recoverer.getIfUnique());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer",
			"org.springframework.boot.amqp.autoconfigure.RabbitProperties" })
	@ConditionalOnBooleanProperty(name = ENABLED_PROPERTY, matchIfMissing = true)
	static class RabbitContainerConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ContainerCustomizer<SimpleMessageListenerContainer> idempotencySimpleContainerCustomizer(
				IdempotencyProperties properties, ObjectProvider<RabbitProperties> rabbitProperties) {
			boolean applicationRetry = applicationRetry(rabbitProperties, (listener) -> listener.getSimple());
			return (container) -> IdempotencyRabbitContainers.customize(container, properties.getLockTtl(),
					applicationRetry);
		}

		@Bean
		@ConditionalOnMissingBean
		ContainerCustomizer<DirectMessageListenerContainer> idempotencyDirectContainerCustomizer(
				IdempotencyProperties properties, ObjectProvider<RabbitProperties> rabbitProperties) {
			boolean applicationRetry = applicationRetry(rabbitProperties, (listener) -> listener.getDirect());
			return (container) -> IdempotencyRabbitContainers.customize(container, properties.getLockTtl(),
					applicationRetry);
		}

		/**
		 * Whether the application enabled Spring Boot's retry of this container type
		 * ({@code spring.rabbitmq.listener.simple.retry.enabled}): its advice chain then
		 * wins.
		 */
		private static boolean applicationRetry(ObjectProvider<RabbitProperties> properties,
				Function<RabbitProperties.Listener, RabbitProperties.AmqpContainer> container) {
			RabbitProperties rabbit = properties.getIfAvailable();
			return rabbit != null && container.apply(rabbit.getListener()).getRetry().isEnabled();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.jms.listener.DefaultMessageListenerContainer",
			"org.springframework.boot.jms.autoconfigure.DefaultJmsListenerContainerFactoryConfigurer" })
	@ConditionalOnBooleanProperty(name = ENABLED_PROPERTY, matchIfMissing = true)
	@EnableConfigurationProperties(IdempotencyJmsListenerProperties.class)
	static class JmsContainerConfiguration {

		/**
		 * Boot's listener container factory, under the name Boot gives it, so that Boot's
		 * own steps back, and so does this one when the application names its own so.
		 */
		@Bean
		@ConditionalOnSingleCandidate(ConnectionFactory.class)
		@ConditionalOnMissingBean(name = "jmsListenerContainerFactory")
		DefaultJmsListenerContainerFactory jmsListenerContainerFactory(IdempotencyProperties properties,
				IdempotencyJmsListenerProperties jmsProperties, DefaultJmsListenerContainerFactoryConfigurer configurer,
				ConnectionFactory connectionFactory) {
			DefaultJmsListenerContainerFactory factory = new IdempotencyJmsContainers.ContainerFactory(
					properties.getLockTtl(), jmsProperties.getDeadLetterQueue());
			configurer.configure(factory, connectionFactory);
			return factory;
		}

	}

}
