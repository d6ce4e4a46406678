package dev.idempo.autoconfigure.listener;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;

import org.springframework.amqp.listener.ConditionalRejectingErrorHandler.DefaultExceptionStrategy;
import org.springframework.amqp.rabbit.config.RetryInterceptorBuilder;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.ConditionalRejectingErrorHandler;
import org.springframework.core.retry.RetryPolicy;

/**
 * How idempo customizes Spring AMQP's listener containers: a message whose key was reused
 * with another payload is rejected without requeue (so that a dead-letter exchange, if
 * the queue has one, receives it, instead of the broker delivering it again for ever),
 * and a message that meets its key in progress is retried in the consumer's thread with a
 * back-off as long as the lock TTL, then requeued for another round instead of in a loop.
 * Every other exception is left to the container's defaults.
 *
 * @author idempo
 */
final class IdempotencyRabbitContainers {

	private IdempotencyRabbitContainers() {
	}

	/**
	 * Customizes a container that Spring Boot's factory created.
	 * @param container the container
	 * @param lockTtl how long a first delivery may hold its key
	 * @param applicationRetry whether the application enabled Boot's listener retry,
	 * whose advice chain then wins: idempo adds no retry of its own
	 */
	static void customize(AbstractMessageListenerContainer container, Duration lockTtl, boolean applicationRetry) {
		container.setErrorHandler(new ConditionalRejectingErrorHandler(new KeyReusedIsFatal()));
		if (!applicationRetry) {
			RetryPolicy policy = RetryPolicy.builder()
				.includes(IdempotencyInProgressException.class)
				.backOff(IdempotencyListenerContainerAutoConfiguration.inProgressBackOff(lockTtl))
				.build();
			container.setAdviceChain(RetryInterceptorBuilder.stateless()
				.retryPolicy(policy)
				// rethrown, the container requeues the message (its default) for another
				// round
				.recoverer((message, cause) -> rethrow(cause))
				.build());
		}
	}

	private static void rethrow(Throwable cause) {
		if (cause instanceof RuntimeException runtime) {
			throw runtime;
		}
		throw new IllegalStateException(cause);
	}

	/**
	 * Spring AMQP's default strategy, which rejects a message that can never be processed
	 * (one that cannot be converted, for instance), and also one whose key was reused.
	 */
	static final class KeyReusedIsFatal extends DefaultExceptionStrategy {

		@Override
		protected boolean isUserCauseFatal(@Nullable Throwable cause) {
			for (Throwable current = cause; current != null; current = current.getCause()) {
				if (current instanceof IdempotencyKeyReusedException) {
					return true;
				}
			}
			return false;
		}

	}

}
