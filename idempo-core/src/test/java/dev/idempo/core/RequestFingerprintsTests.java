package dev.idempo.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link RequestFingerprints}: the fingerprint that both web stacks store, whole or
 * streamed.
 *
 * @author idempo
 */
class RequestFingerprintsTests {

	@Test
	void theFingerprintIsSha256OverLengthPrefixedVersionMethodPathQueryAndBody() throws NoSuchAlgorithmException {
		byte[] body = "{\"amount\":10}".getBytes(StandardCharsets.UTF_8);
		MessageDigest expected = MessageDigest.getInstance("SHA-256");
		for (String field : new String[] { "fingerprint/1", "POST", "/payments", "?a=1" }) {
			prefixed(expected, field.getBytes(StandardCharsets.UTF_8));
		}
		prefixed(expected, body);
		assertThat(RequestFingerprints.of("POST", "/payments", "a=1", body))
			.as("records stored before streaming existed still match")
			.isEqualTo(HexFormat.of().formatHex(expected.digest()));
	}

	@Test
	void aStreamedBodyInChunksHasTheFingerprintOfTheWholeBody() {
		byte[] body = new byte[100_000];
		for (int i = 0; i < body.length; i++) {
			body[i] = (byte) (i * 31);
		}
		MessageDigest streamed = RequestFingerprints.streamed("PUT", "/files/1", null, body.length);
		for (int offset = 0; offset < body.length; offset += 8192) {
			streamed.update(body, offset, Math.min(8192, body.length - offset));
		}
		assertThat(Digests.hex(streamed)).isEqualTo(RequestFingerprints.of("PUT", "/files/1", null, body));
	}

	@Test
	void anEmptyStreamedBodyHasTheFingerprintOfAnEmptyBody() {
		assertThat(Digests.hex(RequestFingerprints.streamed("DELETE", "/a", "", 0)))
			.isEqualTo(RequestFingerprints.of("DELETE", "/a", "", new byte[0]))
			.isNotEqualTo(RequestFingerprints.of("DELETE", "/a", null, new byte[0]));
	}

	@Test
	void aLengthThatNoFieldCanHoldIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RequestFingerprints.streamed("POST", "/", null, Integer.MAX_VALUE + 1L));
		assertThatIllegalArgumentException().isThrownBy(() -> RequestFingerprints.streamed("POST", "/", null, -1));
	}

	private static void prefixed(MessageDigest digest, byte[] value) {
		int length = value.length;
		digest.update(
				new byte[] { (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length });
		digest.update(value);
	}

}
