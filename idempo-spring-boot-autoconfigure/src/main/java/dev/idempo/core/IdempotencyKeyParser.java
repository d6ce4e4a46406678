package dev.idempo.core;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads an {@code Idempotency-Key} header value: a Structured Fields string (RFC 9651,
 * for example {@code "8e03978e-40d5"}, optionally followed by parameters, which are
 * ignored) or, leniently, the bare value. The key, after unquoting, must be 1 to 255
 * characters of printable ASCII.
 *
 * @author idempo
 */
public final class IdempotencyKeyParser {

	/** The longest key accepted, in characters. */
	public static final int MAX_LENGTH = 255;

	private IdempotencyKeyParser() {
	}

	/**
	 * Parses the values of every key header the request carried (the configured header
	 * and its alias).
	 * @param headerValues every header line, in order
	 * @return the key, or {@code null} if the request carried no key header
	 * @throws InvalidIdempotencyKeyException if there is more than one header, or the one
	 * there is is empty, too long, badly quoted or not printable ASCII
	 */
	public static @Nullable String parse(List<String> headerValues) {
		if (headerValues.isEmpty()) {
			return null;
		}
		if (headerValues.size() > 1) {
			throw new InvalidIdempotencyKeyException("more than one idempotency key header was sent");
		}
		return parse(headerValues.get(0));
	}

	/**
	 * Parses one header value.
	 * @param headerValue the raw header value
	 * @return the key
	 * @throws InvalidIdempotencyKeyException if the value is not an acceptable key
	 */
	public static String parse(String headerValue) {
		String value = trimWhitespace(headerValue);
		if (value.isEmpty()) {
			throw new InvalidIdempotencyKeyException("the idempotency key is empty");
		}
		String key = (value.charAt(0) == '"') ? unquote(value) : value;
		if (value.charAt(0) != '"' && value.indexOf('"') >= 0) {
			throw badlyQuoted();
		}
		if (key.isEmpty()) {
			throw new InvalidIdempotencyKeyException("the idempotency key is empty");
		}
		if (key.length() > MAX_LENGTH) {
			throw new InvalidIdempotencyKeyException(
					"the idempotency key is longer than " + MAX_LENGTH + " characters");
		}
		for (int i = 0; i < key.length(); i++) {
			if (!isPrintableAscii(key.charAt(i))) {
				throw new InvalidIdempotencyKeyException("the idempotency key must be printable ASCII");
			}
		}
		return key;
	}

	private static String unquote(String value) {
		StringBuilder key = new StringBuilder(value.length());
		int i = 1;
		while (i < value.length()) {
			char c = value.charAt(i);
			if (c == '\\') {
				if (i + 1 >= value.length()) {
					throw badlyQuoted();
				}
				char escaped = value.charAt(i + 1);
				if (escaped != '"' && escaped != '\\') {
					throw badlyQuoted();
				}
				key.append(escaped);
				i += 2;
			}
			else if (c == '"') {
				checkParameters(value, i + 1);
				return key.toString();
			}
			else if (!isPrintableAscii(c)) {
				throw new InvalidIdempotencyKeyException("the idempotency key must be printable ASCII");
			}
			else {
				key.append(c);
				i++;
			}
		}
		throw badlyQuoted();
	}

	/**
	 * Structured Fields items may carry parameters ({@code "key";a=1}); they mean nothing
	 * here and are ignored, but anything else after the closing quote is an error.
	 */
	private static void checkParameters(String value, int from) {
		String rest = value.substring(from);
		if (!rest.isEmpty() && !rest.matches("(;[ ]*[a-z*][a-z0-9_.*-]*(=[^;]+)?)+")) {
			throw badlyQuoted();
		}
	}

	private static InvalidIdempotencyKeyException badlyQuoted() {
		return new InvalidIdempotencyKeyException("the idempotency key is not a valid structured field string");
	}

	private static boolean isPrintableAscii(char c) {
		return c >= 0x20 && c <= 0x7E;
	}

	private static String trimWhitespace(String value) {
		int start = 0;
		int end = value.length();
		while (start < end && isWhitespace(value.charAt(start))) {
			start++;
		}
		while (end > start && isWhitespace(value.charAt(end - 1))) {
			end--;
		}
		return value.substring(start, end);
	}

	private static boolean isWhitespace(char c) {
		return c == ' ' || c == '\t';
	}

}
