package dev.idempo.web;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.CapturedResponse;

/**
 * Sees a response before it is stored for replay: it may store it as it is, store another
 * one in its place (redact a signed URL, drop a header), or refuse to store it. Declare
 * beans of this type; they run in order, on the thread that finishes the request, after
 * the response was captured and before it is stored. The client always gets the response
 * the handler produced; only what is replayed changes.
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

}
