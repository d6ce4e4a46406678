package dev.idempo.web;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.StoredResponseFilter;

/**
 * Sees a response before it is stored for replay: it may store it as it is, store another
 * one in its place (redact a signed URL, drop a header), or refuse to store it. Declare
 * beans of this type; they run in order, on the thread that finishes the request, after
 * the response was captured and before it is stored. The client always gets the response
 * the handler produced; only what is replayed changes.
 * <p>
 * Spring MVC only. A {@link StoredResponseFilter} does the same on every web stack
 * (Spring MVC and WebFlux) over a stack-neutral view of the request; the
 * auto-configuration applies beans of both types on Spring MVC, these first. New code
 * should prefer {@link StoredResponseFilter}; this type stays for what needs the servlet
 * request.
 *
 * @author idempo
 */
@FunctionalInterface
public interface IdempotentResponseFilter {

	/**
	 * Decides what is stored.
	 * @param request the request
	 * @param response the captured response (status, the headers the handler set that are
	 * replayable, body)
	 * @return the response to store, or {@code null} to store nothing (the key is
	 * released, counted as {@code idempo.responses{reason=refused}}; for a transactional
	 * handler the record then replays {@code 410 response-not-replayable}, since its
	 * writes commit)
	 */
	@Nullable CapturedResponse beforeStore(HttpServletRequest request, CapturedResponse response);

	/**
	 * A stack-neutral filter as a Spring MVC one.
	 * @param filter the filter
	 * @return the same filter, over the servlet request
	 */
	static IdempotentResponseFilter of(StoredResponseFilter filter) {
		return (request, response) -> filter.beforeStore(new ServletProtectedRequest(request), response);
	}

}
