package dev.idempo.rabbit;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.context.annotation.Bean;

import dev.idempo.Idempotent;

/**
 * The documentation's RabbitMQ recipe, compiled here; {@link RabbitErrorHandlingTests}
 * declares the same queues under random names.
 */
class PaymentQueuesRecipe {

	// tag::rabbit-queues[]
	@Bean
	Queue payments() {
		return QueueBuilder.durable("payments")
			.deadLetterExchange("") // the default exchange...
			.deadLetterRoutingKey("payments.dlq") // ...routes to this queue
			.build();
	}

	@Bean
	Queue paymentsDeadLetters() {
		return QueueBuilder.durable("payments.dlq").build();
	}

	@RabbitListener(queues = "payments")
	@Idempotent(key = "#message.messageProperties.messageId")
	public void onPayment(Message message) {
		// book the payment
	}
	// end::rabbit-queues[]

}
