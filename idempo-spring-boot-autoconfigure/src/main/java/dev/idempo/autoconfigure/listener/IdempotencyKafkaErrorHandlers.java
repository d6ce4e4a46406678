package dev.idempo.autoconfigure.listener;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;

import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.util.backoff.FixedBackOff;

/**
 * Spring Kafka's {@link DefaultErrorHandler} as idempo configures it: its defaults for
 * every exception (nine retries without delay, then the recoverer), except that
 * {@link IdempotencyKeyReusedException} goes to the recoverer at once and
 * {@link IdempotencyInProgressException} is retried with
 * {@link IdempotencyListenerContainerAutoConfiguration#inProgressBackOff(Duration) a
 * back-off} as long as the lock TTL and then redelivered again, never recovered: its
 * first delivery may still fail, and then only the duplicate is left to run.
 *
 * @author idempo
 */
final class IdempotencyKafkaErrorHandlers {

	private static final Log logger = LogFactory.getLog(IdempotencyKafkaErrorHandlers.class);

	/** Spring Kafka's own default: ten deliveries in all, no delay. */
	private static final FixedBackOff KAFKA_DEFAULT_BACK_OFF = new FixedBackOff(0, 9);

	private IdempotencyKafkaErrorHandlers() {
	}

	/**
	 * Creates the error handler.
	 * @param lockTtl how long a first delivery may hold its key
	 * @param recoverer the application's recoverer, or {@code null} for Spring Kafka's
	 * default, which logs the record
	 * @return the error handler
	 */
	static DefaultErrorHandler create(Duration lockTtl, @Nullable ConsumerRecordRecoverer recoverer) {
		ConsumerRecordRecoverer delegate = (recoverer != null) ? recoverer : IdempotencyKafkaErrorHandlers::logFailed;
		ConsumerRecordRecoverer notInProgress = (record, ex) -> {
			if (inProgress(ex)) {
				// a recoverer that throws makes Spring Kafka seek the record again and
				// start a new round of the back-off
				throw new IdempotencyInProgressRedelivery(ex);
			}
			delegate.accept(record, ex);
		};
		DefaultErrorHandler handler = new DefaultErrorHandler(notInProgress, KAFKA_DEFAULT_BACK_OFF);
		handler.addNotRetryableExceptions(IdempotencyKeyReusedException.class);
		handler.setBackOffFunction((record, ex) -> inProgress(ex)
				? IdempotencyListenerContainerAutoConfiguration.inProgressBackOff(lockTtl) : null);
		return handler;
	}

	static boolean inProgress(@Nullable Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof IdempotencyInProgressException) {
				return true;
			}
		}
		return false;
	}

	private static void logFailed(org.apache.kafka.clients.consumer.ConsumerRecord<?, ?> record,
			@Nullable Exception ex) {
		logger.error("Retries exhausted for " + KafkaUtils.format(record) + "; the record is skipped", ex);
	}

	/**
	 * Why the recoverer gave a record back: its key was still in progress after a whole
	 * round of the back-off.
	 */
	static final class IdempotencyInProgressRedelivery extends RuntimeException {

		IdempotencyInProgressRedelivery(@Nullable Exception cause) {
			super("The record's idempotency key is still in progress; it is delivered again", cause);
		}

	}

}
