package dev.idempo.core;

import java.time.Duration;
import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * A route protected by configuration ({@code idempo.routes}) rather than by
 * {@link dev.idempo.Idempotent}: the requests whose path matches a {@link PathPattern}
 * and whose method is one of the route's. Its settings are those of the annotation's
 * attributes; each web flow (Spring MVC's {@code IdempotentHandlers}, WebFlux's
 * {@code IdempotentHandlerPolicies}) resolves them into a policy of its own. Shared by
 * both flows, so here; it needs spring-web (an optional dependency of this module), which
 * every web flow has.
 *
 * @author idempo
 */
public final class IdempotentRoute {

	/** The request methods that take part; the others pass through untouched. */
	public static final Set<String> PROTECTED_METHODS = Set.of("POST", "PATCH", "PUT", "DELETE");

	/** The request methods that never take part, routed or annotated. */
	public static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

	private final PathPattern pattern;

	private final Set<String> methods;

	private final Settings settings;

	/**
	 * Creates a route.
	 * @param pattern a {@link PathPattern} such as {@code /payments/**}, matched against
	 * the path within the application
	 * @param methods the request methods it protects: some of POST, PATCH, PUT and DELETE
	 * @param settings its settings
	 * @throws IllegalArgumentException if the pattern does not parse or a method does not
	 * take part
	 */
	public IdempotentRoute(String pattern, Collection<String> methods, Settings settings) {
		this.pattern = parse(pattern);
		this.methods = methods.stream()
			.map((method) -> method.trim().toUpperCase(Locale.ROOT))
			.collect(Collectors.toUnmodifiableSet());
		for (String method : this.methods) {
			String problem = methodProblem(method);
			if (problem != null) {
				throw new IllegalArgumentException(problem);
			}
		}
		this.settings = settings;
	}

	/**
	 * Parses a route's pattern as Spring MVC and WebFlux parse their mappings' patterns.
	 * @param pattern the pattern
	 * @return the parsed pattern
	 * @throws IllegalArgumentException if it does not parse, with the parser's message
	 */
	public static PathPattern parse(String pattern) {
		if (!pattern.startsWith("/")) {
			throw new IllegalArgumentException("'" + pattern + "' is not a path pattern: it must start with '/'");
		}
		try {
			return PathPatternParser.defaultInstance.parse(pattern);
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("'" + pattern + "' is not a path pattern: " + ex.getMessage(), ex);
		}
	}

	/**
	 * What is wrong with a method of a route.
	 * @param method the method, upper case
	 * @return why it cannot be one of a route's methods, {@code null} if it can
	 */
	public static @Nullable String methodProblem(String method) {
		if (SAFE_METHODS.contains(method)) {
			return method + " requests never take part (GET, HEAD, OPTIONS and TRACE pass through untouched): "
					+ "remove it; a route protects some of POST, PATCH, PUT and DELETE";
		}
		if (!PROTECTED_METHODS.contains(method)) {
			return "'" + method + "' is not a method that takes part: a route protects some of POST, PATCH, PUT "
					+ "and DELETE";
		}
		return null;
	}

	/**
	 * Whether this route protects a request.
	 * @param path the request's path within the application
	 * @param method the request's method
	 * @return whether it matches
	 */
	public boolean matches(PathContainer path, String method) {
		return this.methods.contains(method) && this.pattern.matches(path);
	}

	/**
	 * The route's pattern.
	 * @return the pattern
	 */
	public PathPattern pattern() {
		return this.pattern;
	}

	/**
	 * The methods the route protects.
	 * @return the methods, upper case
	 */
	public Set<String> methods() {
		return this.methods;
	}

	/**
	 * The route's settings.
	 * @return the settings
	 */
	public Settings settings() {
		return this.settings;
	}

	@Override
	public String toString() {
		return this.methods.stream().sorted().collect(Collectors.joining(",")) + " " + this.pattern;
	}

	/**
	 * What a route sets, as the annotation's attributes do.
	 *
	 * @param ttl how long its responses are kept, {@code null} for
	 * {@code idempo.response-ttl}
	 * @param required whether it requires a key
	 * @param cacheResponse whether its responses are stored
	 * @param responses which statuses it stores, {@code null} for
	 * {@code idempo.responses}
	 * @param fingerprint what its fingerprints cover beyond the request line and body,
	 * {@code null} for {@code idempo.fingerprint}
	 */
	public record Settings(@Nullable Duration ttl, boolean required, boolean cacheResponse,
			@Nullable ResponseStoragePolicy responses, @Nullable FingerprintOptions fingerprint) {

		/**
		 * Settings that store and fingerprint as the application does.
		 * @param ttl how long its responses are kept, {@code null} for
		 * {@code idempo.response-ttl}
		 * @param required whether it requires a key
		 * @param cacheResponse whether its responses are stored
		 */
		public Settings(@Nullable Duration ttl, boolean required, boolean cacheResponse) {
			this(ttl, required, cacheResponse, null, null);
		}

	}

}
