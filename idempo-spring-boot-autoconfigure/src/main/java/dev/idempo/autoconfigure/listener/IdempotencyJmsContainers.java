package dev.idempo.autoconfigure.listener;

import java.time.Duration;

import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;

import org.springframework.jms.config.DefaultJmsListenerContainerFactory;
import org.springframework.jms.listener.DefaultMessageListenerContainer;
import org.springframework.jms.support.destination.DestinationResolver;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Spring JMS's listener containers as idempo configures them. JMS has no way for a
 * consumer to reject a message: a listener that throws rolls its session back (or
 * recovers it) and the broker delivers the message again by its own redelivery policy,
 * with no delay and about ten times by default before its dead-letter queue gets it. So
 * the container handles idempo's exceptions itself:
 * <ul>
 * <li>{@link IdempotencyKeyReusedException}: the message is sent to the dead-letter queue
 * through the listener's session and acknowledged (with a transacted session, both in one
 * commit), so it is delivered once and kept, never redelivered;</li>
 * <li>{@link IdempotencyInProgressException}: the listener is invoked again in the
 * consumer's thread after a
 * {@link IdempotencyListenerContainerAutoConfiguration#inProgressBackOff(Duration)
 * back-off} as long as the lock TTL, and only then rolled back, so that the broker
 * redelivers it for another round rather than in a loop.</li>
 * </ul>
 * Every other exception is left to the container's defaults.
 *
 * @author idempo
 */
final class IdempotencyJmsContainers {

	private static final Log logger = LogFactory.getLog(IdempotencyJmsContainers.class);

	private IdempotencyJmsContainers() {
	}

	static boolean causedBy(@Nullable Throwable ex, Class<? extends Throwable> type) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (type.isInstance(cause)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Spring's {@link DefaultJmsListenerContainerFactory}, creating idempo's containers;
	 * Spring Boot's configurer applies the {@code spring.jms.listener.*} properties to
	 * it.
	 */
	static final class ContainerFactory extends DefaultJmsListenerContainerFactory {

		private final Duration lockTtl;

		private final String deadLetterQueue;

		ContainerFactory(Duration lockTtl, String deadLetterQueue) {
			this.lockTtl = lockTtl;
			this.deadLetterQueue = deadLetterQueue;
		}

		@Override
		protected DefaultMessageListenerContainer createContainerInstance() {
			return new Container(IdempotencyListenerContainerAutoConfiguration.inProgressBackOff(this.lockTtl),
					this.deadLetterQueue);
		}

	}

	/**
	 * A {@link DefaultMessageListenerContainer} that never spins on idempo's exceptions.
	 */
	static final class Container extends DefaultMessageListenerContainer {

		private final BackOff inProgressBackOff;

		private final String deadLetterQueue;

		Container(BackOff inProgressBackOff, String deadLetterQueue) {
			this.inProgressBackOff = inProgressBackOff;
			this.deadLetterQueue = deadLetterQueue;
		}

		@Override
		protected void invokeListener(Session session, Message message) throws JMSException {
			BackOffExecution backOff = null;
			while (true) {
				try {
					super.invokeListener(session, message);
					return;
				}
				catch (JMSException | RuntimeException ex) {
					if (causedBy(ex, IdempotencyKeyReusedException.class)) {
						deadLetter(session, message, ex);
						return;
					}
					if (!causedBy(ex, IdempotencyInProgressException.class)) {
						throw ex;
					}
					backOff = (backOff != null) ? backOff : this.inProgressBackOff.start();
					if (!waitBeforeRetry(backOff.nextBackOff())) {
						// rolled back by the container: the broker redelivers it
						throw ex;
					}
				}
			}
		}

		private static boolean waitBeforeRetry(long millis) {
			if (millis == BackOffExecution.STOP) {
				return false;
			}
			try {
				Thread.sleep(millis);
				return true;
			}
			catch (InterruptedException interrupted) {
				Thread.currentThread().interrupt();
				return false;
			}
		}

		/**
		 * Sends the message to the dead-letter queue in the listener's session; the
		 * container then acknowledges (commits) it, as if the listener had succeeded.
		 */
		private void deadLetter(Session session, Message message, Exception cause) throws JMSException {
			DestinationResolver resolver = getDestinationResolver();
			Destination deadLetters = resolver.resolveDestinationName(session, this.deadLetterQueue, false);
			try (MessageProducer producer = session.createProducer(deadLetters)) {
				producer.send(message);
			}
			logger.warn("Message " + message.getJMSMessageID() + " reused an idempotency key with another payload; "
					+ "it is moved to " + this.deadLetterQueue + " instead of being redelivered", cause);
		}

	}

}
