package dev.idempo.kafka;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;

import org.springframework.context.annotation.Bean;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.ExponentialBackOff;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The documentation's recipe for an application that defines its own Kafka error handler
 * (idempo's then steps back), compiled here.
 */
class OwnErrorHandlerRecipe {

	// tag::own-error-handler[]
	@Bean
	DefaultErrorHandler errorHandler(ConsumerRecordRecoverer recoverer) {
		DefaultErrorHandler handler = new DefaultErrorHandler(recoverer, new FixedBackOff(0, 9));
		handler.addNotRetryableExceptions(IdempotencyKeyReusedException.class);
		handler
			.setBackOffFunction((record, ex) -> (ex instanceof IdempotencyInProgressException) ? inProgress() : null);
		return handler;
	}

	private static ExponentialBackOff inProgress() {
		ExponentialBackOff backOff = new ExponentialBackOff(100, 1.5);
		backOff.setMaxInterval(2000);
		backOff.setMaxElapsedTime(30_000); // idempo.lock-ttl
		return backOff;
	}
	// end::own-error-handler[]

}
