package dev.idempo.core;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * An HTTP request as idempo's hooks see it, whatever the web stack: what Spring MVC's
 * {@code HttpServletRequest} and WebFlux's {@code ServerHttpRequest} both have, so that
 * one {@link ProblemCustomizer}, {@link StoredResponseFilter} or
 * {@link FingerprintStrategy} serves either. A view, valid while the request is being
 * handled; not to be kept.
 *
 * @author idempo
 */
public interface ProtectedRequest {

	/**
	 * The HTTP method.
	 * @return the method, such as {@code POST}
	 */
	String method();

	/**
	 * The request path as sent: not decoded, without the query string.
	 * @return the path
	 */
	String path();

	/**
	 * The query string as sent, not decoded.
	 * @return the query string without its {@code ?}, or {@code null} if there is none
	 */
	@Nullable String rawQuery();

	/**
	 * Every value of a header.
	 * @param name the header's name, matched case-insensitively
	 * @return the values in the order sent, empty if the header is absent
	 */
	List<String> headers(String name);

	/**
	 * The first value of a header.
	 * @param name the header's name, matched case-insensitively
	 * @return the value, or {@code null} if the header is absent
	 */
	default @Nullable String header(String name) {
		List<String> values = headers(name);
		return values.isEmpty() ? null : values.get(0);
	}

	/**
	 * An attribute of the request: a servlet request attribute on Spring MVC, an exchange
	 * attribute on WebFlux.
	 * @param name the attribute's name
	 * @return its value, or {@code null}
	 */
	@Nullable Object attribute(String name);

	/**
	 * The stack's own request behind this view, for what the view does not carry.
	 * @param <T> the type
	 * @param type {@code jakarta.servlet.http.HttpServletRequest} on Spring MVC,
	 * {@code org.springframework.web.server.ServerWebExchange} on WebFlux
	 * @return the request, or {@code null} if it is not of that type
	 */
	<T> @Nullable T unwrap(Class<T> type);

}
