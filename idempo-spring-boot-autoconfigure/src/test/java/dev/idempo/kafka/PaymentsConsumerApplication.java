package dev.idempo.kafka;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;

import dev.idempo.testsupport.ApplicationProcess;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.ContainerProperties.AckMode;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.RecordInterceptor;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The consumer of the Kafka proofs: {@link PaymentListener} (with {@code @Idempotent}) or
 * {@link PlainPaymentListener} (without), chosen by {@code payments.listener}, consuming
 * {@code payments.topic} from {@code payments.bootstrap-servers} in the consumer group
 * {@code payments.group} with two listener threads. It runs as a JVM of its own
 * ({@link ApplicationProcess}, so that the test can SIGKILL it) or in the test's JVM.
 * <p>
 * The container is configured here rather than through Boot's Kafka auto-configuration,
 * which is not on this module's test class path, so that every setting the proofs rely on
 * is visible:
 * <ul>
 * <li>{@code payments.commit} {@code per-record}: the container commits each record's
 * offset once its listener has returned ({@link AckMode#RECORD}); {@code never}: it
 * commits none while it runs ({@link AckMode#TIME} with a period longer than any test),
 * so that every record it processed is still uncommitted when the test kills it;</li>
 * <li>a failed delivery is redelivered after 50 ms, without limit, which is also how a
 * delivery that meets a running duplicate ({@code IdempotencyInProgressException}) is
 * retried;</li>
 * <li>short session and heartbeat intervals, so that the group notices a killed member in
 * seconds (the test broker allows them);</li>
 * <li>{@code payments.listen-on-start=false}: the application starts without joining the
 * group, until its {@code KafkaListenerEndpointRegistry} is started, so that a test can
 * have a second consumer ready while the first one works.</li>
 * </ul>
 */
@SpringBootApplication
@EnableKafka
public class PaymentsConsumerApplication {

	public static void main(String[] args) {
		ApplicationProcess.run(PaymentsConsumerApplication.class, args);
	}

	@Bean
	ConsumerFactory<String, String> consumerFactory(@Value("${payments.bootstrap-servers}") String bootstrapServers,
			@Value("${payments.group}") String group) {
		return new DefaultKafkaConsumerFactory<>(
				Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers, ConsumerConfig.GROUP_ID_CONFIG, group,
						ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
						false, ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 3000,
						ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500),
				new StringDeserializer(), new StringDeserializer());
	}

	@Bean
	ConcurrentKafkaListenerContainerFactory<String, String> kafkaListenerContainerFactory(
			ConsumerFactory<String, String> consumerFactory, Deliveries deliveries,
			@Value("${payments.commit}") String commit,
			@Value("${payments.listen-on-start:true}") boolean listenOnStart) {
		ConcurrentKafkaListenerContainerFactory<String, String> factory = new ConcurrentKafkaListenerContainerFactory<>();
		factory.setConsumerFactory(consumerFactory);
		factory.setConcurrency(2);
		factory.setAutoStartup(listenOnStart);
		switch (commit) {
			case "per-record" -> factory.getContainerProperties().setAckMode(AckMode.RECORD);
			case "never" -> {
				factory.getContainerProperties().setAckMode(AckMode.TIME);
				factory.getContainerProperties().setAckTime(Duration.ofDays(1).toMillis());
			}
			default -> throw new IllegalArgumentException("payments.commit: per-record or never, not " + commit);
		}
		factory.setCommonErrorHandler(new DefaultErrorHandler(new FixedBackOff(50, FixedBackOff.UNLIMITED_ATTEMPTS)));
		factory.setRecordInterceptor(deliveries);
		return factory;
	}

	@Bean
	Deliveries deliveries() {
		return new Deliveries();
	}

	/** Counts the records handed to the listener, redeliveries included. */
	static final class Deliveries implements RecordInterceptor<String, String> {

		private final AtomicInteger count = new AtomicInteger();

		@Override
		public @Nullable ConsumerRecord<String, String> intercept(ConsumerRecord<String, String> record,
				Consumer<String, String> consumer) {
			this.count.incrementAndGet();
			return record;
		}

		int count() {
			return this.count.get();
		}

	}

}
