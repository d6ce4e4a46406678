package dev.idempo.webflux;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Proves that BlockHound is installed in this module's test JVMs
 * ({@code dev.idempo.testsupport.BlockHoundExtension}): a blocking call on one of
 * Reactor's non-blocking threads fails.
 *
 * @author idempo
 */
class BlockHoundTests {

	@Test
	void blockingOnANonBlockingThreadFails() {
		Throwable thrown = catchThrowable(() -> Mono.delay(Duration.ofMillis(1)).doOnNext((tick) -> {
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}).block(Duration.ofSeconds(10)));
		assertThat(thrown).isNotNull();
		Throwable cause = thrown;
		while (!(cause instanceof BlockingOperationError) && cause.getCause() != null) {
			cause = cause.getCause();
		}
		assertThat(cause).isInstanceOf(BlockingOperationError.class).hasMessageContaining("Thread.sleep");
	}

}
