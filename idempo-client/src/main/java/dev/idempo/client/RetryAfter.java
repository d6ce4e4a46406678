package dev.idempo.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
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
	 * Two of the three date formats RFC 9110 makes recipients accept: IMF-fixdate and the
	 * obsolete asctime format (the third, RFC 850, depends on the current year).
	 */
	private static final List<DateTimeFormatter> DATES = List.of(DateTimeFormatter.RFC_1123_DATE_TIME,
			DateTimeFormatter.ofPattern("EEE MMM d HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC));

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
		for (DateTimeFormatter format : formats(now)) {
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

	/**
	 * The formats, RFC 850's two-digit year read as RFC 9110 says: a year more than 50
	 * years in the future is one of the past century.
	 */
	private static List<DateTimeFormatter> formats(Instant now) {
		int year = now.atOffset(ZoneOffset.UTC).getYear();
		DateTimeFormatter rfc850 = new DateTimeFormatterBuilder().appendPattern("EEEE, dd-MMM-")
			.appendValueReduced(ChronoField.YEAR, 2, 2, year - 49)
			.appendPattern(" HH:mm:ss zzz")
			.toFormatter(Locale.US);
		return List.of(DATES.get(0), rfc850, DATES.get(1));
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
