package dev.idempo.web;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Decides whose record a key belongs to. Two requests with the same key but different
 * caller scopes never see each other's records. Declare a bean of this type to replace
 * the default ({@link DefaultCallerScopeResolver}), for example to scope keys by tenant.
 * <p>
 * Called on the request thread, after Spring Security's filters, before the handler. The
 * returned value is only ever hashed, never stored or logged.
 *
 * @author idempo
 */
@FunctionalInterface
public interface CallerScopeResolver {

	/**
	 * Returns the caller scope of a request.
	 * @param request the request
	 * @return a non-null scope; the same caller must always get the same value
	 */
	String resolve(HttpServletRequest request);

}
