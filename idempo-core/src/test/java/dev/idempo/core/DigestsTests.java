package dev.idempo.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Digests}: SHA-256 of length-prefixed fields.
 *
 * @author idempo
 */
class DigestsTests {

	@Test
	void aFieldIsItsLengthInFourBytesThenItsBytes() throws NoSuchAlgorithmException {
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, "héllo");
		MessageDigest expected = MessageDigest.getInstance("SHA-256");
		byte[] bytes = "héllo".getBytes(StandardCharsets.UTF_8);
		expected.update(new byte[] { 0, 0, 0, (byte) bytes.length });
		expected.update(bytes);
		assertThat(Digests.hex(digest)).isEqualTo(HexFormat.of().formatHex(expected.digest()));
	}

	@Test
	void fieldBoundariesCannotBeMovedWithoutChangingTheDigest() {
		assertThat(digestOf("ab", "c")).isNotEqualTo(digestOf("a", "bc"));
		assertThat(digestOf("", "abc")).isNotEqualTo(digestOf("abc", ""));
	}

	@Test
	void eachDigestStartsFresh() {
		MessageDigest first = Digests.sha256();
		Digests.field(first, "used");
		assertThat(Digests.hex(Digests.sha256())).as("the SHA-256 of nothing")
			.isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	}

	@Test
	void aLengthBeyondOneByteIsWrittenBigEndian() throws NoSuchAlgorithmException {
		byte[] value = new byte[300];
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, value);
		MessageDigest expected = MessageDigest.getInstance("SHA-256");
		expected.update(new byte[] { 0, 0, 1, 44 });
		expected.update(value);
		assertThat(Digests.hex(digest)).isEqualTo(HexFormat.of().formatHex(expected.digest()));
	}

	private static String digestOf(String... fields) {
		MessageDigest digest = Digests.sha256();
		for (String field : fields) {
			Digests.field(digest, field);
		}
		return Digests.hex(digest);
	}

}
