package dev.idempo.core;

import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A table of good and bad keys.
 *
 * @author idempo
 */
class IdempotencyKeyParserTests {

	@ParameterizedTest(name = "[{0}] -> [{1}]")
	@CsvSource(delimiter = '|', quoteCharacter = '\'',
			value = { "abc|abc", "\"abc\"|abc",
					"8e03978e-40d5-43e8-bc93-6894a57f9324|8e03978e-40d5-43e8-bc93-6894a57f9324",
					"\"8e03978e-40d5-43e8-bc93-6894a57f9324\"|8e03978e-40d5-43e8-bc93-6894a57f9324", "'  abc  '|abc",
					"\"a b\"|a b", "\"a\\\"b\"|a\"b", "\"a\\\\b\"|a\\b", "\"abc\";foo=1|abc",
					"\"abc\";foo;bar=\"x\"|abc", "x|x", "\"~!@#$%^&*()\"|~!@#$%^&*()" })
	void acceptsGoodKeys(String header, String key) {
		assertThat(IdempotencyKeyParser.parse(header)).isEqualTo(key);
	}

	@ParameterizedTest(name = "[{0}]")
	@ValueSource(strings = { "", "   ", "\"\"", "\"abc", "\"abc\\\"", "\"a\\qb\"", "\"abc\"x", "\"abc\" \"def\"",
			"caf\u00e9", "\"caf\u00e9\"", "a\u0001b", "\"a\tb\"", "\u00ff", "bad\"key", "abc\"" })
	void rejectsBadKeys(String header) {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyParser.parse(header));
	}

	@Test
	void acceptsExactly255Characters() {
		assertThat(IdempotencyKeyParser.parse("k".repeat(255))).hasSize(255);
		assertThat(IdempotencyKeyParser.parse("\"" + "k".repeat(255) + "\"")).hasSize(255);
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyParser.parse("k".repeat(256)));
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyParser.parse("\"" + "k".repeat(256) + "\""));
	}

	/**
	 * Intermediaries may combine repeated header lines into one, joined by commas: a bare
	 * value with a comma is two keys, as two lines are; a quoted string keeps its commas.
	 */
	@ParameterizedTest(name = "[{0}]")
	@ValueSource(strings = { "a1, a2", "a1,a2", "a1 ,a2", "a1,", ",a2", ",", "8e03978e-40d5, 8e03978e-40d5" })
	void bareKeysWithACommaAreRejectedAsTwoKeys(String header) {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyParser.parse(header))
			.withMessageContaining("more than one idempotency key");
	}

	@Test
	void quotedKeysKeepTheirCommas() {
		assertThat(IdempotencyKeyParser.parse("\"a1, a2\"")).isEqualTo("a1, a2");
		assertThat(IdempotencyKeyParser.parse("\",\"")).isEqualTo(",");
		assertThat(IdempotencyKeyParser.parse("\"a1,a2\";note=\"x,y\"")).isEqualTo("a1,a2");
		// two quoted keys joined by a comma are still two keys
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyParser.parse("\"a1\", \"a2\""));
	}

	@Test
	void noHeaderMeansNoKeyAndTwoHeadersAreRejected() {
		assertThat(IdempotencyKeyParser.parse(List.of())).isNull();
		assertThat(IdempotencyKeyParser.parse(List.of("abc"))).isEqualTo("abc");
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyParser.parse(List.of("abc", "abc")));
	}

}
