package dev.idempo.jms;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.listener.IdempotencyListenerContainerAutoConfiguration;
import dev.idempo.testsupport.DeliveryLedger;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.artemis.autoconfigure.ArtemisAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jms.autoconfigure.JmsAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jms.annotation.JmsListener;
import org.springframework.jms.config.JmsListenerEndpointRegistry;
import org.springframework.jms.core.JmsTemplate;
import org.springframework.messaging.handler.annotation.Header;

import static dev.idempo.testsupport.DeliveryLedger.TIMEOUT;
import static dev.idempo.testsupport.DeliveryLedger.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * idempo's JMS listener containers on a real ActiveMQ Artemis broker (Spring Boot's
 * embedded one, in the test JVM, a new one for each test), through Spring Boot's Artemis
 * and JMS auto-configurations with their defaults (a session-transacted container, the
 * broker's dead-letter address {@code DLQ} after ten deliveries, no redelivery delay): an
 * idempotent listener with two consumers, the memory store and a lock TTL of three
 * seconds. The consumers take one message at a time ({@code consumerWindowSize=0}), so a
 * redelivery never waits behind a held one in a busy consumer's buffer.
 * <p>
 * A message whose key was reused is delivered once and ends in the dead-letter queue; a
 * copy that meets its key in progress is retried with a back-off and replays, both
 * acknowledged. With idempo's error handling turned off, both are redelivered in a loop
 * until the broker dead-letters them, the copy in progress while its first delivery still
 * runs: lost.
 *
 * @author idempo
 */
class JmsErrorHandlingTests {

	private static final String DEAD_LETTERS = "DLQ";

	private final String queue = "idempo-errors-" + UUID.randomUUID();

	private @Nullable ConfigurableApplicationContext context;

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
	}

	@Test
	void aReusedKeyIsDeadLetteredAfterOneDelivery() throws JMSException {
		DeliveryLedger ledger = run();
		String key = UUID.randomUUID().toString();
		send(key, "100 EUR");
		await(() -> ledger.successes(key) == 1);
		send(key, "999 EUR");
		Message dead = jms().receive(DEAD_LETTERS);
		assertThat(dead).isInstanceOf(TextMessage.class);
		assertThat(dead.getStringProperty("paymentId")).isEqualTo(key);
		assertThat(((TextMessage) dead).getText()).isEqualTo("999 EUR");
		assertThat(ledger.deliveries(key)).as("one delivery each, no redelivery").isEqualTo(2);
		assertThat(ledger.runs(key)).isOne();
		assertThat(remaining(this.queue)).as("both acknowledged").isNull();
	}

	@Test
	void aCopyThatMeetsItsKeyInProgressIsRetriedWithABackOffAndReplays() {
		DeliveryLedger ledger = run();
		String key = UUID.randomUUID().toString();
		CountDownLatch release = ledger.hold(key);
		send(key, "100 EUR");
		await(() -> ledger.runs(key) == 1);
		send(key, "100 EUR");
		await(() -> ledger.deliveries(key) >= 4);
		long started = System.nanoTime();
		release.countDown();
		await(() -> ledger.successes(key) == 2);
		assertThat(ledger.runs(key)).as("the copy replayed").isOne();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
		assertThat(ledger.deliveries(key)).as("retried with a back-off, not in a loop").isLessThan(12);
		assertThat(remaining(this.queue)).as("both acknowledged").isNull();
		assertThat(remaining(DEAD_LETTERS)).isNull();
	}

	@Test
	void withoutIdempo_sErrorHandlingBothAreRedeliveredInALoopAndTheCopyInProgressIsLost() {
		DeliveryLedger ledger = run("idempo.listener.error-handling.enabled=false");
		String reused = UUID.randomUUID().toString();
		send(reused, "100 EUR");
		await(() -> ledger.successes(reused) == 1);
		send(reused, "999 EUR");
		await(() -> ledger.deliveries(reused) == 11);
		String copied = UUID.randomUUID().toString();
		CountDownLatch release = ledger.hold(copied);
		send(copied, "100 EUR");
		await(() -> ledger.runs(copied) == 1);
		send(copied, "100 EUR");
		// the broker's ten deliveries, in a loop, while the first still runs
		await(() -> ledger.deliveries(copied) == 11);
		release.countDown();
		await(() -> ledger.successes(copied) == 1);
		assertThat(jms().receive(DEAD_LETTERS)).isNotNull();
		assertThat(jms().receive(DEAD_LETTERS)).as("the copy, never replayed").isNotNull();
		assertThat(ledger.successes(copied)).isOne();
	}

	private DeliveryLedger run(String... properties) {
		int serverId = ThreadLocalRandom.current().nextInt(1000, Integer.MAX_VALUE);
		this.context = new SpringApplicationBuilder(ListenerApplication.class).web(WebApplicationType.NONE)
			// the embedded broker, reached through its in-VM acceptor with a client that
			// takes messages one at a time
			.properties("spring.artemis.embedded.server-id=" + serverId, "spring.artemis.mode=native",
					"spring.artemis.broker-url=vm://" + serverId + "?consumerWindowSize=0",
					"spring.jms.listener.min-concurrency=2", "spring.jms.listener.max-concurrency=2",
					"spring.jms.template.receive-timeout=" + TIMEOUT.toMillis() + "ms", "idempo.lock-ttl=3s",
					"logging.level.org.apache.activemq.audit=warn", "test.queue=" + this.queue)
			.properties(properties)
			// the tests' application.properties leaves the broker out of every other
			// context
			.run("--spring.artemis.embedded.enabled=true");
		return this.context.getBean(DeliveryLedger.class);
	}

	private JmsTemplate jms() {
		return this.context.getBean(JmsTemplate.class);
	}

	private void send(String key, String body) {
		jms().send(this.queue, (session) -> {
			TextMessage message = session.createTextMessage(body);
			message.setStringProperty("paymentId", key);
			return message;
		});
	}

	/**
	 * What is left on a queue once the listeners are gone: a message they had not
	 * acknowledged is rolled back when they close, and would be received here.
	 */
	private @Nullable Message remaining(String destination) {
		this.context.getBean(JmsListenerEndpointRegistry.class).destroy();
		JmsTemplate template = new JmsTemplate(jms().getConnectionFactory());
		template.setReceiveTimeout(500);
		return template.receive(destination);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ IdempotencyAutoConfiguration.class, IdempotencyListenerContainerAutoConfiguration.class,
			ArtemisAutoConfiguration.class, JmsAutoConfiguration.class })
	static class ListenerApplication {

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

		@JmsListener(destination = "${test.queue}")
		public void onPayment(@Header("paymentId") String paymentId, String amount) {
			this.ledger.delivered(paymentId);
			this.payments.book(paymentId, amount);
			this.ledger.succeeded(paymentId);
		}

	}

	public static class Payments {

		private final DeliveryLedger ledger;

		Payments(DeliveryLedger ledger) {
			this.ledger = ledger;
		}

		@Idempotent(key = "#paymentId")
		public void book(String paymentId, String amount) {
			this.ledger.run(paymentId);
		}

	}

}
