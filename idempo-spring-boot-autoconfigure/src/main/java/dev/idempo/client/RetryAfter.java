package dev.idempo.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Reads a {@code Retry-After} header (RFC 9110, section 10.2.3): a number of seconds, or
 * an HTTP date.
 *
 * @author idempo
 */
final class RetryAfter {

	/**
	 * The three date formats RFC 9110 makes recipients accept: IMF-fixdate, and the
	 * obsolete RFC 850 and asctime formats.
	 */
	private static final List<DateTimeFormatter> DATES = List.of(DateTimeFormatter.RFC_1123_DATE_TIME,
			DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss zzz", Locale.US),
			DateTimeFormatter.ofPattern("EEE MMM d HH:mm:ss yyyy", Locale.US).withZone(java.time.ZoneOffset.UTC));

	/** More digits than this are a longer wait than anyone honours. */
	private static final int MAX_DIGITS = 12;

	private RetryAfter() {
	}

	/**
	 * How long the header asks to wait.
	 * @param value the header value, {@code null} if there is none
	 * @param now the current time, for dates
	 * @return the wait ({@link Duration#ZERO} for a date in the past), or {@code null} if
	 * there is no header or it is neither a number of seconds nor a date
	 */
	static @Nullable Duration parse(@Nullable String value, Instant now) {
		if (value == null) {
			return null;
		}
		String trimmed = value.trim();
		if (trimmed.isEmpty()) {
			return null;
		}
		if (isDigits(trimmed)) {
			return (trimmed.length() > MAX_DIGITS) ? Duration.ofSeconds(Long.MAX_VALUE / 1_000_000_000L)
					: Duration.ofSeconds(Long.parseLong(trimmed));
		}
		// asctime pads one-digit days with a space
		String date = trimmed.replaceAll(" +", " ");
		for (DateTimeFormatter format : DATES) {
			try {
				Instant at = ZonedDateTime.parse(date, format).toInstant();
				return at.isAfter(now) ? Duration.between(now, at) : Duration.ZERO;
			}
			catch (DateTimeParseException ex) {
				// the next format
			}
		}
		return null;
	}

	private static boolean isDigits(String value) {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c < '0' || c > '9') {
				return false;
			}
		}
		return true;
	}

}
