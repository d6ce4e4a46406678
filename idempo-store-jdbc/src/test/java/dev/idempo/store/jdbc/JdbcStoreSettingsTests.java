package dev.idempo.store.jdbc;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The lock sessions' network timeout: by default twice the timeout and at least 10
 * seconds, following the timeout when that changes; one set explicitly stays.
 *
 * @author idempo
 */
class JdbcStoreSettingsTests {

	@Test
	void defaultNetworkTimeoutIsTwiceTheTimeoutAndAtLeastTenSeconds() {
		JdbcStoreSettings defaults = JdbcStoreSettings.defaults();
		assertThat(defaults.networkTimeout()).isEqualTo(Duration.ofSeconds(10));
		assertThat(defaults.withTimeout(Duration.ofSeconds(1)).networkTimeout()).isEqualTo(Duration.ofSeconds(10));
		assertThat(defaults.withTimeout(Duration.ofMillis(7500)).networkTimeout()).isEqualTo(Duration.ofSeconds(16));
		assertThat(defaults.withTimeout(Duration.ofSeconds(20)).networkTimeout()).isEqualTo(Duration.ofSeconds(40));
	}

	@Test
	void explicitNetworkTimeoutStaysWhenTheTimeoutChanges() {
		JdbcStoreSettings settings = JdbcStoreSettings.defaults()
			.withTimeout(Duration.ofSeconds(1))
			.withNetworkTimeout(Duration.ofSeconds(3));
		assertThat(settings.networkTimeout()).isEqualTo(Duration.ofSeconds(3));
		assertThat(settings.withTimeout(Duration.ofSeconds(2)).networkTimeout()).isEqualTo(Duration.ofSeconds(3));
		assertThat(settings.withNetworkTimeout(null).networkTimeout()).isEqualTo(Duration.ofSeconds(10));
	}

	@Test
	void networkTimeoutUnderASecondOrShorterThanTheTimeoutIsRefused() {
		JdbcStoreSettings settings = JdbcStoreSettings.defaults().withTimeout(Duration.ofMillis(200));
		assertThatIllegalArgumentException().isThrownBy(() -> settings.withNetworkTimeout(Duration.ofMillis(500)))
			.withMessageContaining("at least 1s");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcStoreSettings.defaults().withNetworkTimeout(Duration.ofSeconds(2)))
			.withMessageContaining("not be shorter than 'timeout'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcStoreSettings.defaults().withNetworkTimeout(Duration.ofDays(30)))
			.withMessageContaining("at most");
	}

}
