package dev.idempo.client;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The waits between attempts without {@code Retry-After}.
 *
 * @author idempo
 */
class BackoffTests {

	private static final IdempotencyClientSettings SETTINGS = IdempotencyClientSettings.defaults()
		.withBackoff(Duration.ofMillis(100), Duration.ofMillis(1000), 3.0, 0.0);

	@Test
	void growsByTheMultiplierUpToTheMaximum() {
		Backoff backoff = new Backoff(SETTINGS, () -> 0.7);
		assertThat(backoff.delay(0)).isEqualTo(Duration.ofMillis(100));
		assertThat(backoff.delay(1)).isEqualTo(Duration.ofMillis(300));
		assertThat(backoff.delay(2)).isEqualTo(Duration.ofMillis(900));
		assertThat(backoff.delay(3)).isEqualTo(Duration.ofMillis(1000));
		assertThat(backoff.delay(60)).isEqualTo(Duration.ofMillis(1000));
	}

	@Test
	void jitterCutsItsShareOfEachWaitByARandomAmount() {
		IdempotencyClientSettings half = SETTINGS.withBackoff(Duration.ofMillis(100), Duration.ofMillis(1000), 3.0,
				0.5);
		assertThat(new Backoff(half, () -> 0.0).delay(1)).isEqualTo(Duration.ofMillis(300));
		assertThat(new Backoff(half, () -> 0.5).delay(1)).isEqualTo(Duration.ofMillis(225));
		assertThat(new Backoff(half, () -> 0.999999).delay(1).toMillis()).isEqualTo(150);
		IdempotencyClientSettings full = SETTINGS.withBackoff(Duration.ofMillis(100), Duration.ofMillis(1000), 3.0,
				1.0);
		assertThat(new Backoff(full, () -> 0.999999).delay(3)).isLessThan(Duration.ofMillis(1));
	}

	@Test
	void realJitterSpreadsTheWaits() {
		IdempotencyClientSettings half = SETTINGS.withBackoff(Duration.ofMillis(100), Duration.ofMillis(1000), 3.0,
				0.5);
		Backoff backoff = new Backoff(half);
		long distinct = java.util.stream.IntStream.range(0, 50).mapToObj((i) -> backoff.delay(2)).distinct().count();
		assertThat(distinct).isGreaterThan(10);
		assertThat(java.util.stream.IntStream.range(0, 50).mapToObj((i) -> backoff.delay(2)))
			.allSatisfy((delay) -> assertThat(delay).isBetween(Duration.ofMillis(450), Duration.ofMillis(900)));
	}

}
