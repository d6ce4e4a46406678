package dev.idempo.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link FingerprintOptions} and the canonical JSON form it fingerprints.
 *
 * @author idempo
 */
class FingerprintOptionsTests {

	private static final String JSON = "application/json";

	private final FingerprintOptions options = FingerprintOptions
		.of(List.of("/timestamp", "/meta/requestId", "/items/1", "/a~1b", "/m~0n"), List.of());

	private byte[] body(String contentType, String json) {
		return this.options.body(contentType, json.getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void noneLeavesTheBodyAsSent() {
		byte[] body = "{\"b\":1, \"a\":2}".getBytes(StandardCharsets.UTF_8);
		assertThat(FingerprintOptions.NONE.body(JSON, body)).isSameAs(body);
		assertThat(FingerprintOptions.of(List.of(), List.of())).isSameAs(FingerprintOptions.NONE);
		assertThat(FingerprintOptions.NONE.withHeaders("abc", (name) -> List.of("x"))).isEqualTo("abc");
	}

	@Test
	void ignoredFieldsMakeNoDifference() {
		assertThat(body(JSON, "{\"amount\":5,\"timestamp\":\"10:00\",\"meta\":{\"requestId\":\"r1\",\"k\":1}}"))
			.isEqualTo(body(JSON, "{\"amount\":5,\"timestamp\":\"10:01\",\"meta\":{\"requestId\":\"r2\",\"k\":1}}"))
			.isEqualTo(body(JSON, "{\"amount\":5,\"meta\":{\"k\":1}}"));
		assertThat(body(JSON, "{\"a/b\":1,\"m~n\":2,\"x\":3}")).isEqualTo(body(JSON, "{\"a/b\":7,\"m~n\":8,\"x\":3}"));
		assertThat(body(JSON, "{\"items\":[1,2,3]}")).isEqualTo(body(JSON, "{\"items\":[1,9,3]}"));
	}

	@Test
	void otherFieldsStillMakeADifference() {
		assertThat(body(JSON, "{\"amount\":5,\"timestamp\":1}"))
			.isNotEqualTo(body(JSON, "{\"amount\":6,\"timestamp\":1}"));
		assertThat(body(JSON, "{\"meta\":{\"k\":1}}")).isNotEqualTo(body(JSON, "{\"meta\":{\"k\":2}}"));
		assertThat(body(JSON, "{\"items\":[1,2,3]}")).isNotEqualTo(body(JSON, "{\"items\":[1,2,4]}"));
		// a field of that name elsewhere is not the ignored one
		assertThat(body(JSON, "{\"x\":{\"timestamp\":1}}")).isNotEqualTo(body(JSON, "{\"x\":{\"timestamp\":2}}"));
		assertThat(body(JSON, "{\"a\":\"1\"}")).isNotEqualTo(body(JSON, "{\"a\":1}"));
		assertThat(body(JSON, "{\"a\":null}")).isNotEqualTo(body(JSON, "{\"a\":\"null\"}"));
		assertThat(body(JSON, "[{\"a\":1},{\"b\":2}]")).isNotEqualTo(body(JSON, "[{\"a\":1,\"b\":2}]"));
	}

	@Test
	void theFormIsCanonical() {
		assertThat(body(JSON, "{\"b\":1,\"a\":[true,null,\"s\"]}"))
			.isEqualTo(body("application/problem+json; charset=UTF-8",
					" {\n \"a\" : [ true , null, \"s\" ], \"b\":1.0 } "))
			.isEqualTo(body(JSON, "{\"a\":[true,null,\"\\u0073\"],\"b\":1e0}"));
	}

	@Test
	void nonJsonOrUnparsableBodiesAreFingerprintedAsSent() {
		byte[] text = "{\"timestamp\":1}".getBytes(StandardCharsets.UTF_8);
		assertThat(this.options.body("text/plain", text)).isSameAs(text);
		assertThat(this.options.body(null, text)).isSameAs(text);
		for (String unparsable : List.of("{\"timestamp\":1", "{\"a\":1,\"a\":2}", "{} {}", "", "not json")) {
			byte[] bytes = unparsable.getBytes(StandardCharsets.UTF_8);
			assertThat(this.options.body(JSON, bytes)).as(unparsable).isSameAs(bytes);
		}
	}

	/**
	 * Jackson reads these numbers (or BigDecimal cannot strip their zeros) only by
	 * throwing a {@code NumberFormatException} or an {@code ArithmeticException}, not a
	 * {@code JacksonException}: such a body has no canonical form and is fingerprinted as
	 * sent, as the documentation says of numbers beyond Jackson's limits, instead of
	 * failing the request with a 500.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "{\"a\":1e-2147483648}", "{\"a\":1e2147483648}", "{\"a\":100e2147483647}" })
	void numbersBeyondBigDecimalAreFingerprintedAsSent(String json) {
		byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
		assertThat(this.options.body(JSON, bytes)).isSameAs(bytes);
	}

	/**
	 * A JSON string may escape a lone surrogate ({@code "\ud800"}); encoded to UTF-8 it
	 * becomes {@code ?}, so documents that differ there must not share a form.
	 */
	@Test
	void loneSurrogatesDoNotMeetOtherStrings() {
		byte[] lone = body(JSON, "{\"note\":\"\\ud800\"}");
		assertThat(lone).isNotEqualTo(body(JSON, "{\"note\":\"?\"}"));
		assertThat(lone).isNotEqualTo(body(JSON, "{\"note\":\"\\udfff\"}"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "timestamp", "", "/a~2", "/a~", "#/a" })
	void invalidPointersAreRefused(String pointer) {
		assertThat(FingerprintOptions.pointerProblem(pointer)).contains("'" + pointer + "'");
		assertThatIllegalArgumentException().isThrownBy(() -> FingerprintOptions.of(List.of(pointer), List.of()));
	}

	@Test
	void headersJoinTheFingerprint() {
		FingerprintOptions headers = FingerprintOptions.of(List.of(), List.of("X-Tenant", "x-region"));
		assertThat(headers.headers()).containsExactly("x-region", "x-tenant");
		Map<String, List<String>> one = Map.of("x-tenant", List.of("a"), "x-region", List.of("eu"));
		String fingerprint = headers.withHeaders("f", (name) -> one.getOrDefault(name, List.of()));
		assertThat(fingerprint).isNotEqualTo("f")
			.isEqualTo(headers.withHeaders("f", (name) -> one.getOrDefault(name, List.of())));
		assertThat(headers.withHeaders("f", (name) -> name.equals("x-tenant") ? List.of("b") : List.of("eu")))
			.isNotEqualTo(fingerprint);
		String absent = headers.withHeaders("f", (name) -> List.of());
		String empty = headers.withHeaders("f", (name) -> List.of(""));
		assertThat(absent).isNotEqualTo(empty);
		assertThat(headers.withHeaders("g", (name) -> one.getOrDefault(name, List.of()))).isNotEqualTo(fingerprint);
	}

}
