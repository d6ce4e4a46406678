package dev.idempo.core;

import java.util.Map;

/**
 * Customizes idempo's own problem responses, on every web stack: extra members such as a
 * trace id, a localized title or detail. Declare beans of this type; they run in order,
 * before the body is written, for every problem the request flow answers (400, 409, 413,
 * 422, 503, and on Spring MVC the 410 of a transactional record) and for the 409 and 422
 * that answer a key in progress or reused escaping a handler. The response is still
 * written by idempo, never thrown, so no exception handler can turn it into a 500.
 * <p>
 * On Spring MVC it runs on the request thread, after the servlet-typed
 * {@code dev.idempo.web.IdempotencyProblemCustomizer} beans; on WebFlux it runs on the
 * thread that answers the request, often an event loop, and must not block.
 *
 * @author idempo
 */
@FunctionalInterface
public interface ProblemCustomizer {

	/**
	 * Customizes the members of one problem response. {@code type} and {@code status} are
	 * part of idempo's contract: changes to them are ignored. Values that are not
	 * strings, numbers or booleans are written as their {@code toString()}. An exception
	 * is logged and the problem written without this customizer's changes.
	 * @param request the request
	 * @param problem the problem
	 * @param members the members, in order: {@code type}, {@code title}, {@code status},
	 * {@code detail}, {@code instance}; modifiable
	 */
	void customize(ProtectedRequest request, IdempotencyProblemType problem, Map<String, Object> members);

}
