package dev.idempo.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;

import dev.idempo.Idempotent;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;

/**
 * The listener of the README's Kafka recipe: one payment per record, whose key is the
 * payment's id, written in one transaction with its idempotency record.
 */
@ConditionalOnProperty(name = "payments.listener", havingValue = "idempotent")
// tag::kafka-listener[]
@Component
public class PaymentListener {

	private final Payments payments;

	PaymentListener(Payments payments) {
		this.payments = payments;
	}

	@KafkaListener(topics = "${payments.topic}")
	@Idempotent(key = "#record.key()", transactional = true)
	public void onPayment(ConsumerRecord<String, String> record) {
		this.payments.insert(record.key(), record.value());
	}

}
// end::kafka-listener[]
