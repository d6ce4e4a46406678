package dev.idempo.core;

import java.security.MessageDigest;

import org.jspecify.annotations.Nullable;

/**
 * The fingerprint of a request: a SHA-256 digest of its method, path, query string and
 * body bytes. A key reused with a different fingerprint is rejected with {@code 422}.
 *
 * @author idempo
 */
public final class RequestFingerprint {

	private static final int VERSION = 1;

	private RequestFingerprint() {
	}

	/**
	 * Computes a fingerprint.
	 * @param method the HTTP method, such as {@code POST}
	 * @param path the request path as sent (not decoded)
	 * @param query the raw query string, or {@code null}
	 * @param body the body bytes (or their canonical form for form posts)
	 * @return the fingerprint as lowercase hex
	 */
	public static String of(String method, String path, @Nullable String query, byte[] body) {
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, "fingerprint/" + VERSION);
		Digests.field(digest, method);
		Digests.field(digest, path);
		Digests.field(digest, (query != null) ? "?" + query : "");
		Digests.field(digest, body);
		return Digests.hex(digest);
	}

	/**
	 * Computes the storage key of a record: a digest of the caller scope and the
	 * idempotency key, so that raw client input never reaches a store and two callers
	 * never share a record.
	 * @param callerScope the caller scope
	 * @param idempotencyKey the parsed idempotency key
	 * @return the storage key as lowercase hex (64 characters)
	 */
	public static String storageKey(String callerScope, String idempotencyKey) {
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, "key/" + VERSION);
		Digests.field(digest, callerScope);
		Digests.field(digest, idempotencyKey);
		return Digests.hex(digest);
	}

}
