package dev.idempo.client;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reading {@code Retry-After}: seconds, the three HTTP date formats, and what is ignored.
 *
 * @author idempo
 */
class RetryAfterTests {

	private static final Instant NOW = Instant.parse("1994-11-06T08:49:30Z");

	@Test
	void secondsAreSeconds() {
		assertThat(RetryAfter.parse("120", NOW)).isEqualTo(Duration.ofSeconds(120));
		assertThat(RetryAfter.parse(" 5 ", NOW)).isEqualTo(Duration.ofSeconds(5));
		assertThat(RetryAfter.parse("0", NOW)).isEqualTo(Duration.ZERO);
	}

	@Test
	void absurdlyManySecondsAreAVeryLongWaitNotAnOverflow() {
		assertThat(RetryAfter.parse("99999999999999999999999", NOW)).isGreaterThan(Duration.ofDays(365 * 100));
	}

	@Test
	void imfFixdateRfc850AndAsctimeAreReadAgainstNow() {
		assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).isEqualTo(Duration.ofSeconds(7));
		assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", NOW)).isEqualTo(Duration.ofSeconds(7));
		assertThat(RetryAfter.parse("Sun Nov  6 08:49:37 1994", NOW)).isEqualTo(Duration.ofSeconds(7));
	}

	@Test
	void aDateInThePastMeansNow() {
		assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:00 GMT", NOW)).isEqualTo(Duration.ZERO);
	}

	@Test
	void missingEmptyNegativeAndMalformedValuesAreIgnored() {
		assertThat(RetryAfter.parse(null, NOW)).isNull();
		assertThat(RetryAfter.parse("", NOW)).isNull();
		assertThat(RetryAfter.parse("-1", NOW)).isNull();
		assertThat(RetryAfter.parse("1.5", NOW)).isNull();
		assertThat(RetryAfter.parse("soon", NOW)).isNull();
		assertThat(RetryAfter.parse("Sun, 06 Nov 1994", NOW)).isNull();
	}

}
