package dev.idempo.store;

import java.util.Objects;

/**
 * A claim on a key, identified by an owner token that is unique per claim. Every write
 * after the claim is conditional on the token still owning the key.
 *
 * @param key the storage key
 * @param token the owner token
 * @author idempo
 */
public record Lease(String key, String token) {

	public Lease {
		Objects.requireNonNull(key, "key");
		Objects.requireNonNull(token, "token");
	}

}
