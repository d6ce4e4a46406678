package dev.idempo.core;

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
public final class Digests {

	/**
	 * Never updated, only cloned. In the server, {@code MessageDigest.getInstance}
	 * creates each digest reflectively ({@code Constructor.newInstance} walks the stack
	 * for its caller): a profile at 32 clients put it at 60% of the storage key's cost,
	 * and a request takes two or three digests. A clone copies a few arrays; unlike a
	 * per-thread cache it also suits virtual threads, which are never reused.
	 */
	private static final MessageDigest SHA256 = newSha256();

	private static final boolean CLONEABLE = isCloneable(SHA256);

	private Digests() {
	}

	/**
	 * A fresh SHA-256 digest.
	 * @return the digest
	 */
	public static MessageDigest sha256() {
		if (CLONEABLE) {
			try {
				return (MessageDigest) SHA256.clone();
			}
			catch (CloneNotSupportedException ex) {
				// not expected once the first clone succeeded
			}
		}
		return newSha256();
	}

	/**
	 * Adds a length-prefixed UTF-8 string.
	 * @param digest the digest
	 * @param value the value
	 */
	public static void field(MessageDigest digest, String value) {
		field(digest, value.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Adds length-prefixed bytes.
	 * @param digest the digest
	 * @param value the value
	 */
	public static void field(MessageDigest digest, byte[] value) {
		length(digest, value.length);
		digest.update(value);
	}

	/**
	 * Adds the length prefix of a field whose bytes follow, for a value that streams.
	 * @param digest the digest
	 * @param length the number of bytes that the caller adds next
	 */
	public static void length(MessageDigest digest, int length) {
		digest.update(
				new byte[] { (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length });
	}

	/**
	 * Completes the digest.
	 * @param digest the digest
	 * @return it as lowercase hex
	 */
	public static String hex(MessageDigest digest) {
		return HexFormat.of().formatHex(digest.digest());
	}

	private static MessageDigest newSha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

	private static boolean isCloneable(MessageDigest digest) {
		try {
			digest.clone();
			return true;
		}
		catch (CloneNotSupportedException ex) {
			return false;
		}
	}

}
