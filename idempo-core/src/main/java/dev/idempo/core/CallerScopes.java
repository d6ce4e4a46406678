package dev.idempo.core;

import java.security.MessageDigest;
import java.util.List;

/**
 * The caller scopes that idempo's default resolvers give web requests, the same on Spring
 * MVC ({@code dev.idempo.web.DefaultCallerScopeResolver}) and on WebFlux
 * ({@code dev.idempo.webflux.DefaultReactiveCallerScopeResolver}), so that a client keeps
 * its records whichever stack answers it. Here, apart from both, so that a scope can be
 * derived from what a support engineer knows about a caller without a request and without
 * either web stack, as the {@code idempo} Actuator endpoint does.
 *
 * @author idempo
 */
public final class CallerScopes {

	/** The scope of requests without a principal or an {@code Authorization} header. */
	public static final String ANONYMOUS = "anonymous";

	private CallerScopes() {
	}

	/**
	 * The scope of requests made by an authenticated principal.
	 * @param name the principal's name, as {@code Principal.getName()} or Spring
	 * Security's {@code Authentication.getName()} gives it
	 * @return {@code principal:<name>}
	 */
	public static String principal(String name) {
		return "principal:" + name;
	}

	/**
	 * The scope of requests without an authenticated principal that carry these
	 * {@code Authorization} header values. The values are only hashed: a SHA-256 over
	 * each value's length (four bytes, big-endian) and its UTF-8 bytes, in order.
	 * @param values the header's values, one per header line, as the client sent them
	 * @return {@code authorization:<hex digest>}
	 */
	public static String authorization(List<String> values) {
		MessageDigest digest = Digests.sha256();
		values.forEach((value) -> Digests.field(digest, value));
		return "authorization:" + Digests.hex(digest);
	}

}
