package dev.idempo.jms;

import org.springframework.jms.annotation.JmsListener;
import org.springframework.messaging.handler.annotation.Header;

import dev.idempo.Idempotent;

/**
 * The documentation's JMS recipe, compiled here; {@link JmsErrorHandlingTests} runs the
 * same listener on a queue of a random name.
 */
class PaymentJmsRecipe {

	// tag::jms-listener[]
	@JmsListener(destination = "payments") // with the container factory idempo configures
	@Idempotent(key = "#paymentId")
	public void onPayment(@Header("paymentId") String paymentId, String amount) {
		// book the payment
	}
	// end::jms-listener[]

}
