package dev.idempo.rabbit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.listener.IdempotencyListenerContainerAutoConfiguration;
import dev.idempo.testsupport.DeliveryLedger;
import dev.idempo.testsupport.TestRabbit;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static dev.idempo.testsupport.DeliveryLedger.TIMEOUT;
import static dev.idempo.testsupport.DeliveryLedger.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * idempo's Spring AMQP container customizer on a real RabbitMQ server
 * ({@link TestRabbit}: the local server, else the tests are aborted saying so), through
 * Spring Boot's AMQP auto-configuration: an idempotent listener with two consumers of
 * prefetch one on a queue whose dead-letter exchange routes to a dead-letter queue, the
 * memory store and a lock TTL of three seconds. A message whose key was reused is
 * dead-lettered after one delivery; a copy that meets its key in progress is retried with
 * a back-off and replays. With idempo's error handling turned off, the reused key is
 * requeued in a loop.
 *
 * @author idempo
 */
class RabbitErrorHandlingTests {

	private ConfigurableApplicationContext context;

	private String queue;

	private String deadLetters;

	@BeforeEach
	void start() {
		TestRabbit.server();
		this.queue = "idempo-errors-" + UUID.randomUUID();
		this.deadLetters = this.queue + ".dlq";
		this.context = null;
	}

	@AfterEach
	void stop() {
		if (this.context != null) {
			// the consumers first, so that nothing declares the queues again
			this.context.getBean(RabbitListenerEndpointRegistry.class).stop();
			AmqpAdmin admin = this.context.getBean(AmqpAdmin.class);
			admin.deleteQueue(this.queue);
			admin.deleteQueue(this.deadLetters);
			this.context.close();
		}
	}

	@Test
	void aReusedKeyIsDeadLetteredAfterOneDelivery() {
		DeliveryLedger ledger = run();
		String key = UUID.randomUUID().toString();
		send(key, "100 EUR");
		await(() -> ledger.successes(key) == 1);
		send(key, "999 EUR");
		Message dead = this.context.getBean(RabbitTemplate.class).receive(this.deadLetters, TIMEOUT.toMillis());
		assertThat(dead).isNotNull();
		assertThat(dead.getMessageProperties().getMessageId()).isEqualTo(key);
		assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("999 EUR");
		assertThat(ledger.deliveries(key)).as("one delivery each, no requeue").isEqualTo(2);
		assertThat(ledger.runs(key)).isOne();
	}

	@Test
	void aCopyThatMeetsItsKeyInProgressIsRetriedWithABackOffAndReplays() throws InterruptedException {
		DeliveryLedger ledger = run();
		String key = UUID.randomUUID().toString();
		CountDownLatch release = ledger.hold(key);
		send(key, "100 EUR");
		send(key, "100 EUR");
		await(() -> ledger.deliveries(key) >= 4);
		long started = System.nanoTime();
		release.countDown();
		await(() -> ledger.successes(key) == 2);
		assertThat(ledger.runs(key)).as("the copy replayed").isOne();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
		assertThat(ledger.deliveries(key)).isLessThan(12);
		assertThat(this.context.getBean(RabbitTemplate.class).receive(this.deadLetters)).isNull();
	}

	@Test
	void withoutIdempo_sErrorHandlingAReusedKeyIsRequeuedInALoop() {
		DeliveryLedger ledger = run("idempo.listener.error-handling.enabled=false");
		String key = UUID.randomUUID().toString();
		send(key, "100 EUR");
		await(() -> ledger.successes(key) == 1);
		send(key, "999 EUR");
		await(() -> ledger.deliveries(key) > 50);
		assertThat(this.context.getBean(RabbitTemplate.class).receive(this.deadLetters)).isNull();
	}

	private DeliveryLedger run(String... properties) {
		this.context = new SpringApplicationBuilder(ListenerApplication.class).web(WebApplicationType.NONE)
			.properties(TestRabbit.server().springProperties())
			.properties("spring.rabbitmq.listener.simple.concurrency=2", "spring.rabbitmq.listener.simple.prefetch=1",
					"idempo.lock-ttl=3s", "test.queue=" + this.queue, "test.dead-letters=" + this.deadLetters)
			.properties(properties)
			.run();
		return this.context.getBean(DeliveryLedger.class);
	}

	private void send(String key, String body) {
		Message message = MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8)).setMessageId(key).build();
		this.context.getBean(RabbitTemplate.class).send("", this.queue, message);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ IdempotencyAutoConfiguration.class, IdempotencyListenerContainerAutoConfiguration.class,
			RabbitAutoConfiguration.class })
	static class ListenerApplication {

		// declared by the application's RabbitAdmin when the listeners connect
		@Bean
		Queue deadLetterQueue(org.springframework.core.env.Environment environment) {
			return QueueBuilder.nonDurable(environment.getRequiredProperty("test.dead-letters")).build();
		}

		@Bean
		Queue paymentsQueue(org.springframework.core.env.Environment environment) {
			// rejected messages go through the default exchange to the dead-letter queue
			return QueueBuilder.nonDurable(environment.getRequiredProperty("test.queue"))
				.deadLetterExchange("")
				.deadLetterRoutingKey(environment.getRequiredProperty("test.dead-letters"))
				.build();
		}

		@Bean
		DeliveryLedger ledger() {
			return new DeliveryLedger();
		}

		@Bean
		Payments payments(DeliveryLedger ledger) {
			return new Payments(ledger);
		}

		@Bean
		PaymentsListener paymentsListener(DeliveryLedger ledger, Payments payments) {
			return new PaymentsListener(ledger, payments);
		}

	}

	/** Counts each delivery, then hands the message to the idempotent service. */
	public static class PaymentsListener {

		private final DeliveryLedger ledger;

		private final Payments payments;

		PaymentsListener(DeliveryLedger ledger, Payments payments) {
			this.ledger = ledger;
			this.payments = payments;
		}

		@RabbitListener(queues = "${test.queue}")
		public void onPayment(Message message) {
			String key = message.getMessageProperties().getMessageId();
			this.ledger.delivered(key);
			this.payments.book(message);
			this.ledger.succeeded(key);
		}

	}

	public static class Payments {

		private final DeliveryLedger ledger;

		Payments(DeliveryLedger ledger) {
			this.ledger = ledger;
		}

		@Idempotent(key = "#message.messageProperties.messageId")
		public void book(Message message) {
			this.ledger.run(message.getMessageProperties().getMessageId());
		}

	}

}
