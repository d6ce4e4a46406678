package dev.idempo;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.idempo.IdempotencyTemplate.Options;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.web.IdempotentResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Every way to give a TTL refuses one beyond {@link IdempotencySettings#MAX_TTL}, which
 * not every store can keep; the annotation and the {@code idempo.response-ttl} property
 * are checked at start-up (see the auto-configuration tests).
 */
class TtlBoundsTests {

	private static final Duration TOO_LONG = IdempotencySettings.MAX_TTL.plusSeconds(1);

	@Test
	void aTtlIsPositiveAndAtMostAHundredYears() {
		assertThat(IdempotencySettings.isValidTtl(Duration.ofNanos(1))).isTrue();
		assertThat(IdempotencySettings.isValidTtl(IdempotencySettings.MAX_TTL)).isTrue();
		assertThat(IdempotencySettings.isValidTtl(TOO_LONG)).isFalse();
		assertThat(IdempotencySettings.isValidTtl(Duration.ZERO)).isFalse();
		assertThat(IdempotencySettings.isValidTtl(Duration.ofSeconds(-1))).isFalse();
		assertThat(IdempotencySettings.MAX_TTL).isEqualTo(Duration.ofDays(36_500));
	}

	@Test
	void templateOptionsAndTheHandlersOverrideRefuseALongerOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> Options.defaults().ttl(TOO_LONG))
			.withMessageContaining("at most 36500d");
		assertThat(Options.defaults().ttl(IdempotencySettings.MAX_TTL)).isNotNull();
		assertThatIllegalArgumentException().isThrownBy(() -> IdempotentResponse.ttl(TOO_LONG))
			.withMessageContaining("at most 36500d");
	}

}
