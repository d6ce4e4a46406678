package dev.idempo.web;

import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.ProtectedRequest;

/**
 * A servlet request as the stack-neutral hooks see it.
 *
 * @author idempo
 */
final class ServletProtectedRequest implements ProtectedRequest {

	private final HttpServletRequest request;

	ServletProtectedRequest(HttpServletRequest request) {
		this.request = request;
	}

	@Override
	public String method() {
		return this.request.getMethod();
	}

	@Override
	public String path() {
		return this.request.getRequestURI();
	}

	@Override
	public @Nullable String rawQuery() {
		return this.request.getQueryString();
	}

	@Override
	public List<String> headers(String name) {
		Enumeration<String> values = this.request.getHeaders(name);
		return (values != null) ? Collections.list(values) : List.of();
	}

	@Override
	public @Nullable Object attribute(String name) {
		return this.request.getAttribute(name);
	}

	@Override
	public <T> @Nullable T unwrap(Class<T> type) {
		return type.isInstance(this.request) ? type.cast(this.request) : null;
	}

	@Override
	public String toString() {
		return this.request.getMethod() + " " + this.request.getRequestURI();
	}

}
