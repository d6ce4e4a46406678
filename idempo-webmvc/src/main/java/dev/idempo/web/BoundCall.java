package dev.idempo.web;

import jakarta.servlet.http.HttpServletRequest;

import dev.idempo.core.CurrentIdempotentCall;

/**
 * Binds a protected request's execution to the request thread while its handler runs
 * ({@link CurrentIdempotentCall}), so that outbound calls made by the handler derive
 * their keys from it. Bound in {@code preHandle}, unbound in {@code afterCompletion}, or
 * in {@code afterConcurrentHandlingStarted} when the handler returned an asynchronous
 * result: work that continues on another thread is not bound.
 *
 * @author idempo
 */
final class BoundCall {

	private static final String ATTRIBUTE = BoundCall.class.getName();

	private BoundCall() {
	}

	/**
	 * Binds the execution of the request's claimed key to the current thread.
	 * @param request the request
	 * @param storageKey the digest of the request's caller scope and key
	 */
	static void bind(HttpServletRequest request, String storageKey) {
		request.setAttribute(ATTRIBUTE, CurrentIdempotentCall.bind(storageKey));
	}

	/**
	 * Ends the request's binding, if it has one; a no-op on another thread than the one
	 * it was bound on.
	 * @param request the request
	 */
	static void unbind(HttpServletRequest request) {
		if (request.getAttribute(ATTRIBUTE) instanceof CurrentIdempotentCall.Binding binding) {
			request.removeAttribute(ATTRIBUTE);
			binding.close();
		}
	}

}
