package dev.idempo.store;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Makes the owner tokens of claims: a random prefix drawn once per JVM, then a counter.
 * <p>
 * A token only has to be unique among the claims that may ever meet on one key, across
 * every instance that shares a store: it never leaves the server, so it need not be
 * unguessable. 96 random bits per JVM make two instances' prefixes collide with
 * negligible probability, and the counter keeps the tokens of one JVM apart. Unlike
 * {@link java.util.UUID#randomUUID()}, making one touches no shared {@link SecureRandom},
 * which under load serialises every claim of the JVM on its lock.
 *
 * @author idempo
 */
public final class OwnerTokens {

	private static final String PREFIX;

	static {
		byte[] random = new byte[12];
		new SecureRandom().nextBytes(random);
		PREFIX = HexFormat.of().formatHex(random) + "-";
	}

	private static final AtomicLong counter = new AtomicLong();

	private OwnerTokens() {
	}

	/**
	 * A token no other claim of any instance has had.
	 * @return the token, at most 41 ASCII characters
	 */
	public static String next() {
		return PREFIX + Long.toHexString(counter.incrementAndGet());
	}

}
