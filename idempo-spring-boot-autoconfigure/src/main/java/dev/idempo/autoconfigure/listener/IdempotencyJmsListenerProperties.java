package dev.idempo.autoconfigure.listener;

import dev.idempo.autoconfigure.IdempotencyProperties;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of idempo's JMS listener containers
 * ({@code idempo.listener.jms.*}). Apart from {@link IdempotencyProperties} because they
 * only apply with Spring JMS. Checked when bound.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.listener.jms")
public class IdempotencyJmsListenerProperties implements Validator {

	/**
	 * Queue that receives a message whose idempotency key was reused with another
	 * payload, sent in the listener's own session (with a transacted session, in the same
	 * transaction as its acknowledgement). The default is ActiveMQ Artemis's dead-letter
	 * address; ActiveMQ Classic's is ActiveMQ.DLQ.
	 */
	private String deadLetterQueue = "DLQ";

	public String getDeadLetterQueue() {
		return this.deadLetterQueue;
	}

	public void setDeadLetterQueue(String deadLetterQueue) {
		this.deadLetterQueue = deadLetterQueue;
	}

	@Override
	public boolean supports(Class<?> type) {
		return IdempotencyJmsListenerProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		IdempotencyJmsListenerProperties properties = (IdempotencyJmsListenerProperties) target;
		if (properties.getDeadLetterQueue() == null || properties.getDeadLetterQueue().isBlank()) {
			errors.rejectValue("deadLetterQueue", "idempo.listener.jms.dead-letter-queue",
					"must name a queue: a message whose key was reused is moved there");
		}
	}

}
