package dev.idempo.core;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads an {@code Idempotency-Key} header value: a Structured Fields string (RFC 9651,
 * for example {@code "8e03978e-40d5"}, optionally followed by parameters, which are
 * ignored) or, leniently, the bare value. The key, after unquoting, must be 1 to 255
 * characters of printable ASCII. A bare value may not contain a comma: HTTP lets
 * intermediaries combine repeated header lines into one, separated by commas, so
 * {@code a1, a2} is two keys; a quoted string keeps its commas ({@code "a1, a2"}).
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
	 * there is is empty, too long, badly quoted, not printable ASCII or a bare value with
	 * a comma (two keys combined into one line)
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
		if (value.charAt(0) != '"' && value.indexOf(',') >= 0) {
			// intermediaries may join repeated header lines with commas: a1, a2 is two
			// keys, as two lines are
			throw new InvalidIdempotencyKeyException(
					"more than one idempotency key was sent (a key with a comma must be sent quoted, as a structured field string)");
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
	 * here and are ignored, but they must be well-formed (RFC 9651, section 4.2.3.2), and
	 * nothing else may follow the closing quote.
	 */
	private static void checkParameters(String value, int from) {
		int i = from;
		int end = value.length();
		while (i < end) {
			if (value.charAt(i) != ';') {
				throw badlyQuoted();
			}
			i++;
			while (i < end && value.charAt(i) == ' ') {
				i++;
			}
			i = parameterKey(value, i);
			if (i < end && value.charAt(i) == '=') {
				i = bareItem(value, i + 1);
			}
		}
	}

	private static int parameterKey(String value, int from) {
		if (from >= value.length() || !(isLowerAlpha(value.charAt(from)) || value.charAt(from) == '*')) {
			throw badlyQuoted();
		}
		int i = from + 1;
		while (i < value.length() && isKeyChar(value.charAt(i))) {
			i++;
		}
		return i;
	}

	/** Parses one bare item (RFC 9651, section 4.2.3.1) and returns where it ends. */
	private static int bareItem(String value, int from) {
		if (from >= value.length()) {
			throw badlyQuoted();
		}
		char first = value.charAt(from);
		if (first == '-' || isDigit(first)) {
			return number(value, from);
		}
		if (first == '"') {
			return string(value, from);
		}
		if (isAlpha(first) || first == '*') {
			int i = from + 1;
			while (i < value.length() && (isTokenChar(value.charAt(i)))) {
				i++;
			}
			return i;
		}
		if (first == ':') {
			return byteSequence(value, from);
		}
		if (first == '?') {
			if (from + 1 < value.length() && (value.charAt(from + 1) == '0' || value.charAt(from + 1) == '1')) {
				return from + 2;
			}
			throw badlyQuoted();
		}
		if (first == '@') {
			int end = number(value, from + 1);
			if (value.substring(from + 1, end).indexOf('.') >= 0) {
				throw badlyQuoted();
			}
			return end;
		}
		if (first == '%') {
			return displayString(value, from);
		}
		throw badlyQuoted();
	}

	private static int number(String value, int from) {
		int i = from;
		if (i < value.length() && value.charAt(i) == '-') {
			i++;
		}
		int integerStart = i;
		while (i < value.length() && isDigit(value.charAt(i))) {
			i++;
		}
		int integerDigits = i - integerStart;
		if (integerDigits == 0) {
			throw badlyQuoted();
		}
		if (i < value.length() && value.charAt(i) == '.') {
			int fractionStart = ++i;
			while (i < value.length() && isDigit(value.charAt(i))) {
				i++;
			}
			int fractionDigits = i - fractionStart;
			if (integerDigits > 12 || fractionDigits < 1 || fractionDigits > 3) {
				throw badlyQuoted();
			}
			return i;
		}
		if (integerDigits > 15) {
			throw badlyQuoted();
		}
		return i;
	}

	private static int string(String value, int from) {
		int i = from + 1;
		while (i < value.length()) {
			char c = value.charAt(i);
			if (c == '\\') {
				if (i + 1 >= value.length() || (value.charAt(i + 1) != '"' && value.charAt(i + 1) != '\\')) {
					throw badlyQuoted();
				}
				i += 2;
			}
			else if (c == '"') {
				return i + 1;
			}
			else if (!isPrintableAscii(c)) {
				throw badlyQuoted();
			}
			else {
				i++;
			}
		}
		throw badlyQuoted();
	}

	private static int byteSequence(String value, int from) {
		int close = value.indexOf(':', from + 1);
		if (close < 0) {
			throw badlyQuoted();
		}
		String base64 = value.substring(from + 1, close);
		for (int i = 0; i < base64.length(); i++) {
			char c = base64.charAt(i);
			if (!(isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=')) {
				throw badlyQuoted();
			}
		}
		try {
			Base64.getDecoder().decode(base64);
		}
		catch (IllegalArgumentException ex) {
			throw badlyQuoted();
		}
		return close + 1;
	}

	private static int displayString(String value, int from) {
		if (from + 1 >= value.length() || value.charAt(from + 1) != '"') {
			throw badlyQuoted();
		}
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		int i = from + 2;
		while (i < value.length()) {
			char c = value.charAt(i);
			if (c == '%') {
				if (i + 2 >= value.length() || !isLowerHex(value.charAt(i + 1)) || !isLowerHex(value.charAt(i + 2))) {
					throw badlyQuoted();
				}
				bytes.write(HexFormat.fromHexDigits(value, i + 1, i + 3));
				i += 3;
			}
			else if (c == '"') {
				try {
					StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes.toByteArray()));
				}
				catch (CharacterCodingException ex) {
					throw badlyQuoted();
				}
				return i + 1;
			}
			else if (c < 0x20 || c > 0x7E) {
				throw badlyQuoted();
			}
			else {
				bytes.write(c);
				i++;
			}
		}
		throw badlyQuoted();
	}

	private static boolean isDigit(char c) {
		return c >= '0' && c <= '9';
	}

	private static boolean isLowerAlpha(char c) {
		return c >= 'a' && c <= 'z';
	}

	private static boolean isAlpha(char c) {
		return isLowerAlpha(c) || (c >= 'A' && c <= 'Z');
	}

	private static boolean isLowerHex(char c) {
		return isDigit(c) || (c >= 'a' && c <= 'f');
	}

	private static boolean isKeyChar(char c) {
		return isLowerAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*';
	}

	/** {@code tchar / ":" / "/"}. */
	private static boolean isTokenChar(char c) {
		return isAlpha(c) || isDigit(c) || "!#$%&'*+-.^_`|~:/".indexOf(c) >= 0;
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
