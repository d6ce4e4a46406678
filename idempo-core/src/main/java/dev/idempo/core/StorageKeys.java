package dev.idempo.core;

import java.security.MessageDigest;

/**
 * The storage key of a record: a digest of its scope and idempotency key, so that raw
 * input never reaches a store and two scopes never share a record. Apart from
 * {@code dev.idempo.web.RequestFingerprint}, which needs the servlet API, so that
 * applications without a web server can compute keys.
 *
 * @author idempo
 */
public final class StorageKeys {

	private static final int VERSION = 1;

	private StorageKeys() {
	}

	/**
	 * Computes a storage key.
	 * @param scope the caller scope (web requests) or the method or template scope
	 * @param idempotencyKey the idempotency key
	 * @return the storage key as lowercase hex (64 characters)
	 */
	public static String of(String scope, String idempotencyKey) {
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, "key/" + VERSION);
		Digests.field(digest, scope);
		Digests.field(digest, idempotencyKey);
		return Digests.hex(digest);
	}

}
