package dev.idempo.core;

import org.jspecify.annotations.Nullable;

/**
 * Sees a response before it is stored for replay, on every web stack: it may store it as
 * it is, store another one in its place (redact a signed URL, drop a header), or refuse
 * to store it. Declare beans of this type; they run in order, after the response was
 * captured and before it is stored. The client always gets the response the handler
 * produced; only what is replayed changes.
 * <p>
 * On Spring MVC it runs on the thread that finishes the request, after the servlet-typed
 * {@code dev.idempo.web.IdempotentResponseFilter} beans; on WebFlux it runs on the thread
 * that wrote the response's last bytes, often an event loop, and must not block.
 *
 * @author idempo
 */
@FunctionalInterface
public interface StoredResponseFilter {

	/**
	 * Decides what is stored.
	 * @param request the request
	 * @param response the captured response (status, the headers the handler set that are
	 * replayable, body)
	 * @return the response to store, or {@code null} to store nothing (the key is
	 * released, counted as {@code idempo.responses{reason=refused}}; for a transactional
	 * Spring MVC handler the record then replays {@code 410 response-not-replayable},
	 * since its writes commit)
	 */
	@Nullable CapturedResponse beforeStore(ProtectedRequest request, CapturedResponse response);

}
