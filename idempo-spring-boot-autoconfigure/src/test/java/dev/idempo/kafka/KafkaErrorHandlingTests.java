package dev.idempo.kafka;

import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.listener.IdempotencyListenerContainerAutoConfiguration;
import dev.idempo.testsupport.TestKafka;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * idempo's Kafka error handler on a real broker (the embedded KRaft broker of
 * {@link TestKafka}), through Spring Boot's Kafka auto-configuration: an idempotent
 * listener on a topic of two partitions, two listener threads, the memory store and a
 * lock TTL of three seconds. A record whose key was reused goes to the recoverer at once;
 * a copy that meets its key in progress is retried with a back-off, across rounds of it,
 * and ends as a replay, or runs if the first delivery failed. With the application's own
 * Spring Kafka default error handler instead, the copy is retried ten times at once and
 * skipped.
 *
 * @author idempo
 */
class KafkaErrorHandlingTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void start() {
		context = start(IdempotoErrorHandling.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void aReusedKeyGoesToTheRecovererAtOnce() {
		ListenerLedger ledger = context.getBean(ListenerLedger.class);
		String key = UUID.randomUUID().toString();
		send(context, 0, key, "100 EUR");
		await(() -> ledger.successes(key) == 1);
		send(context, 0, key, "999 EUR");
		await(() -> ledger.recovered(key) != null);
		assertThat(NestedExceptionUtils.getMostSpecificCause(ledger.recovered(key)))
			.isInstanceOf(IdempotencyKeyReusedException.class);
		assertThat(ledger.deliveries(key)).as("delivered once each, not retried").isEqualTo(2);
		assertThat(ledger.runs(key)).isOne();
	}

	@Test
	void aCopyThatMeetsItsKeyInProgressIsRetriedWithABackOffAndReplays() throws InterruptedException {
		ListenerLedger ledger = context.getBean(ListenerLedger.class);
		String key = UUID.randomUUID().toString();
		ListenerLedger.Hold hold = ledger.hold(key, false);
		sendOnBothPartitions(key);
		assertThat(hold.awaitEntered()).isTrue();
		// the copy on the other partition meets the key in progress and is retried
		await(() -> ledger.deliveries(key) >= 4);
		long started = System.nanoTime();
		hold.release();
		await(() -> ledger.successes(key) == 2);
		assertThat(ledger.runs(key)).as("the copy replayed").isOne();
		assertThat(ledger.completed(key)).isOne();
		assertThat(ledger.recovered(key)).isNull();
		// the back-off is at most two seconds apart; without one, ten retries take ~200
		// ms
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
		assertThat(ledger.deliveries(key)).isLessThan(12);
	}

	@Test
	void aCopyWaitsForAFirstDeliveryLongerThanTheLockTtlAndRunsWhenItFails() throws InterruptedException {
		ListenerLedger ledger = context.getBean(ListenerLedger.class);
		String key = UUID.randomUUID().toString();
		ListenerLedger.Hold hold = ledger.hold(key, true);
		sendOnBothPartitions(key);
		assertThat(hold.awaitEntered()).isTrue();
		// one round of the back-off over three seconds retries 7 times (100 ms, then half
		// as long again each time): 12 deliveries take a second round, which is where
		// Spring Kafka's default handler would have skipped the copy
		await(() -> ledger.deliveries(key) >= 12);
		hold.release();
		await(() -> ledger.successes(key) == 2);
		assertThat(ledger.completed(key)).as("the message ran once, not lost").isOne();
		assertThat(ledger.runs(key)).isEqualTo(2);
		assertThat(ledger.recovered(key)).isNull();
	}

	@Test
	void withTheApplication_sOwnErrorHandlerTheCopyIsRetriedAtOnceAndSkipped() throws InterruptedException {
		try (ConfigurableApplicationContext own = start(ApplicationErrorHandling.class)) {
			assertThat(own.getBean(CommonErrorHandler.class)).isSameAs(own.getBean("applicationErrorHandler"));
			ListenerLedger ledger = own.getBean(ListenerLedger.class);
			String key = UUID.randomUUID().toString();
			ListenerLedger.Hold hold = ledger.hold(key, true);
			send(own, 0, key, "100 EUR");
			assertThat(hold.awaitEntered()).isTrue();
			send(own, 1, key, "100 EUR");
			await(() -> ledger.recovered(key) != null);
			assertThat(NestedExceptionUtils.getMostSpecificCause(ledger.recovered(key)))
				.isInstanceOf(IdempotencyInProgressException.class);
			assertThat(ledger.deliveries(key)).isEqualTo(11);
			hold.release();
		}
	}

	private static ConfigurableApplicationContext start(Class<?> errorHandling) {
		String topic = TestKafka.randomName("idempo-errors");
		TestKafka.createTopic(topic, 2);
		return new SpringApplicationBuilder(ListenerApplication.class, errorHandling).web(WebApplicationType.NONE)
			.properties("spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers(),
					"spring.kafka.consumer.group-id=" + TestKafka.randomName("idempo-errors"),
					"spring.kafka.consumer.auto-offset-reset=earliest", "idempo.lock-ttl=3s", "test.topic=" + topic)
			.run();
	}

	private static void sendOnBothPartitions(String key) {
		send(context, 0, key, "100 EUR");
		send(context, 1, key, "100 EUR");
	}

	@SuppressWarnings("unchecked")
	private static void send(ConfigurableApplicationContext context, int partition, String key, String value) {
		KafkaTemplate<Object, Object> template = context.getBean(KafkaTemplate.class);
		String topic = context.getEnvironment().getRequiredProperty("test.topic");
		try {
			template.send(topic, partition, key, value).get();
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not send to " + topic, ex);
		}
	}

	private static void await(BooleanSupplier condition) {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("Not within " + TIMEOUT);
			}
			Thread.onSpinWait();
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ IdempotencyAutoConfiguration.class, IdempotencyListenerContainerAutoConfiguration.class,
			KafkaAutoConfiguration.class })
	static class ListenerApplication {

		@Bean
		ListenerLedger ledger() {
			return new ListenerLedger();
		}

		@Bean
		PaymentsListener paymentsListener(ListenerLedger ledger) {
			return new PaymentsListener(ledger);
		}

	}

	/** idempo's error handler, with the ledger as the application's recoverer. */
	@Configuration(proxyBeanMethods = false)
	static class IdempotoErrorHandling {

	}

	/** The application's own error handler: Spring Kafka's defaults. */
	@Configuration(proxyBeanMethods = false)
	static class ApplicationErrorHandling {

		@Bean
		DefaultErrorHandler applicationErrorHandler(ListenerLedger ledger) {
			return new DefaultErrorHandler(ledger);
		}

	}

	public static class PaymentsListener {

		private final ListenerLedger ledger;

		PaymentsListener(ListenerLedger ledger) {
			this.ledger = ledger;
		}

		@KafkaListener(topics = "${test.topic}", concurrency = "2")
		@Idempotent(key = "#record.key()")
		public void onPayment(ConsumerRecord<String, String> record) {
			this.ledger.run(record.key());
		}

	}

}
