package dev.idempo.web;

import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;

import dev.idempo.core.ProblemCustomizer;

/**
 * Customizes idempo's own problem responses (400, 409, 413, 422, 503, and the 410 of a
 * transactional record), and the 409 and 422 that {@link IdempotencyExceptionResolver}
 * answers a key in progress or reused with: extra members such as a trace id, a localized
 * title or detail. Declare beans of this type; they run in order on the request thread,
 * before the body is written. The response is still written by idempo, never thrown, so
 * no exception handler can turn it into a 500.
 * <p>
 * Spring MVC only. A {@link ProblemCustomizer} does the same on every web stack (Spring
 * MVC and WebFlux) over a stack-neutral view of the request; the auto-configuration
 * applies beans of both types on Spring MVC, these first. New code should prefer
 * {@link ProblemCustomizer}; this type stays for what needs the servlet request.
 *
 * @author idempo
 */
@FunctionalInterface
public interface IdempotencyProblemCustomizer {

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
	void customize(HttpServletRequest request, IdempotencyProblem problem, Map<String, Object> members);

	/**
	 * A stack-neutral customizer as a Spring MVC one.
	 * @param customizer the customizer
	 * @return the same customizer, over the servlet request
	 */
	static IdempotencyProblemCustomizer of(ProblemCustomizer customizer) {
		return (request, problem, members) -> customizer.customize(new ServletProtectedRequest(request),
				problem.neutral(), members);
	}

}
