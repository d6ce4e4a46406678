package dev.idempo.core;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 over length-prefixed fields, so that no two different field lists can produce
 * the same input ({@code "ab","c"} and {@code "a","bc"} differ).
 *
 * @author idempo
 */
final class Digests {

	private Digests() {
	}

	static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

	static void field(MessageDigest digest, String value) {
		field(digest, value.getBytes(StandardCharsets.UTF_8));
	}

	static void field(MessageDigest digest, byte[] value) {
		digest.update(ByteBuffer.allocate(Integer.BYTES).putInt(value.length).array());
		digest.update(value);
	}

	static String hex(MessageDigest digest) {
		return HexFormat.of().formatHex(digest.digest());
	}

}
