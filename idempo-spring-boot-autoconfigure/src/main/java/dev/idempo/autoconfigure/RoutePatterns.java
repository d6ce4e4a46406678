package dev.idempo.autoconfigure;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.IdempotentRoute;

import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Checks an {@code idempo.routes} entry's path and methods when the properties are bound,
 * as the web flow will read them; a class of its own so that binding the properties of an
 * application without spring-web never loads the parser.
 *
 * @author idempo
 */
final class RoutePatterns {

	private static final boolean PARSER_PRESENT = ClassUtils
		.isPresent("org.springframework.web.util.pattern.PathPatternParser", RoutePatterns.class.getClassLoader());

	private RoutePatterns() {
	}

	/**
	 * What is wrong with a route's path.
	 * @param path the path pattern
	 * @return why it is not a path pattern, {@code null} if it is one
	 */
	static @Nullable String problem(@Nullable String path) {
		if (!StringUtils.hasText(path)) {
			return "must be set: a Spring path pattern such as /payments/**";
		}
		if (!PARSER_PRESENT) {
			// no web flow to protect: nothing reads the routes
			return null;
		}
		try {
			IdempotentRoute.parse(path);
			return null;
		}
		catch (IllegalArgumentException ex) {
			return ex.getMessage();
		}
	}

	/**
	 * What is wrong with one of a route's methods.
	 * @param method the method as configured
	 * @return why it cannot be one of a route's methods, {@code null} if it can
	 */
	static @Nullable String methodProblem(String method) {
		return PARSER_PRESENT ? IdempotentRoute.methodProblem(method.trim().toUpperCase(Locale.ROOT)) : null;
	}

}
