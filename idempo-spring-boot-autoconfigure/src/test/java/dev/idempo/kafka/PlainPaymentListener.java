package dev.idempo.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * The same listener as {@link PaymentListener} without {@code @Idempotent}:
 * transactional, so a failed delivery rolls its row back as there, and so that a run with
 * it shows what the annotation prevents (a row per delivery, not per payment).
 */
@Component
@ConditionalOnProperty(name = "payments.listener", havingValue = "plain")
public class PlainPaymentListener {

	private final Payments payments;

	PlainPaymentListener(Payments payments) {
		this.payments = payments;
	}

	@KafkaListener(topics = "${payments.topic}")
	@Transactional
	public void onPayment(ConsumerRecord<String, String> record) {
		this.payments.insert(record.key(), record.value());
	}

}
