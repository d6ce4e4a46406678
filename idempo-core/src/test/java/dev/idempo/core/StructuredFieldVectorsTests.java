package dev.idempo.core;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Every {@code item} case of the public Structured Field test vectors (copied into
 * {@code src/test/resources/sf-tests}, see the README there) through the key parser, with
 * idempo's documented rules on top of RFC 9651:
 * <ul>
 * <li>a value that starts with {@code "} is a Structured Fields string item: it must
 * parse exactly as the vectors say (parameters are checked and ignored), and its string
 * is the key, which must then be 1 to 255 characters;</li>
 * <li>any other value is a bare key and is not parsed as a Structured Field (UUIDs that
 * start with a digit, Base64 keys with {@code =} are not tokens): it is the value itself,
 * trimmed of spaces and tabs, and is rejected only if it is empty, longer than 255
 * characters, contains {@code "}, a comma (two keys combined into one line) or anything
 * but printable ASCII;</li>
 * <li>a key sent on more than one header line is rejected (the specification of idempo
 * says so), even where Structured Fields would combine the lines.</li>
 * </ul>
 */
class StructuredFieldVectorsTests {

	private static final List<String> FILES = List.of("binary", "boolean", "date", "display-string", "item", "number",
			"string", "string-generated", "token", "token-generated");

	static Stream<Arguments> itemCases() throws IOException {
		JsonMapper mapper = JsonMapper.builder().build();
		List<Arguments> cases = new ArrayList<>();
		for (String file : FILES) {
			try (InputStream in = StructuredFieldVectorsTests.class
				.getResourceAsStream("/sf-tests/" + file + ".json")) {
				assertThat(in).as(file).isNotNull();
				for (JsonNode node : mapper.readTree(in)) {
					if (!"item".equals(node.path("header_type").asString())) {
						continue;
					}
					List<String> raw = new ArrayList<>();
					node.path("raw").forEach((line) -> raw.add(line.asString()));
					boolean mustFail = node.path("must_fail").asBoolean(false);
					JsonNode bare = node.path("expected").path(0);
					String string = (!mustFail && bare.isString()) ? bare.asString() : null;
					cases.add(Arguments.of(file + ": " + node.path("name").asString(), raw, mustFail, string));
				}
			}
		}
		return cases.stream();
	}

	@Test
	void everyFileHasItemCases() throws IOException {
		assertThat(itemCases().count()).isGreaterThan(600);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("itemCases")
	void keyParserFollowsTheVectors(String name, List<String> raw, boolean mustFail, @Nullable String string) {
		String expected = expectedKey(raw, mustFail, string);
		if (expected == null) {
			assertThatExceptionOfType(InvalidIdempotencyKeyException.class).as("%s must be rejected", raw)
				.isThrownBy(() -> IdempotencyKeyParser.parse(raw));
		}
		else {
			assertThat(IdempotencyKeyParser.parse(raw)).isEqualTo(expected);
		}
	}

	/** What idempo's rules make of a case: the key, or {@code null} if it is rejected. */
	private static @Nullable String expectedKey(List<String> raw, boolean mustFail, @Nullable String string) {
		if (raw.size() != 1) {
			return null;
		}
		String value = raw.get(0).replaceAll("^[ \t]+|[ \t]+$", "");
		if (value.startsWith("\"")) {
			// a Structured Fields string: exactly as the vectors say, then the key's
			// limits
			if (mustFail || string == null || string.isEmpty() || string.length() > IdempotencyKeyParser.MAX_LENGTH) {
				return null;
			}
			return string;
		}
		boolean printable = value.chars().allMatch((c) -> c >= 0x20 && c <= 0x7E);
		if (value.isEmpty() || value.length() > IdempotencyKeyParser.MAX_LENGTH || value.indexOf('"') >= 0
				|| value.indexOf(',') >= 0 || !printable) {
			return null;
		}
		return value;
	}

	@Test
	void parametersAfterAStringMustBeWellFormed() {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyParser.parse("\"abc\";a=@@@"));
		assertThat(IdempotencyKeyParser.parse("\"a;b\";x=\"y;z\"")).isEqualTo("a;b");
		assertThat(IdempotencyKeyParser.parse("\"abc\";a=1;b=?0;c=tok/en:1;d=:aGVsbG8=:;e=@1659578233;f=%\"f%c3%bc\""))
			.isEqualTo("abc");
		assertThat(IdempotencyKeyParser.parse("\"abc\"; a=-1.5;*b")).isEqualTo("abc");
		for (String bad : List.of("\"abc\";A=1", "\"abc\";a=", "\"abc\";a=1.2345", "\"abc\";a=?2",
				"\"abc\";a=%\"%C3%BC\"", "\"abc\";a=:a=b:", "\"abc\";a=\"x", "\"abc\";", "\"abc\" ;a=1",
				"\"abc\";a=@1.5")) {
			assertThatExceptionOfType(InvalidIdempotencyKeyException.class).as(bad)
				.isThrownBy(() -> IdempotencyKeyParser.parse(bad));
		}
	}

}
