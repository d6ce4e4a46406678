package dev.idempo.web;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.ProblemJson;

/**
 * Writes idempo's own error responses as {@code application/problem+json}. They are
 * written directly rather than thrown, so that no application exception handler can turn
 * them into a 500.
 *
 * @author idempo
 */
final class ProblemResponses {

	static final String PROBLEM_JSON = ProblemJson.MEDIA_TYPE;

	private static final Log logger = LogFactory.getLog(ProblemResponses.class);

	private ProblemResponses() {
	}

	static void write(HttpServletRequest request, HttpServletResponse response, IdempotencyProblem problem,
			String detail, @Nullable Duration retryAfter, List<IdempotencyProblemCustomizer> customizers)
			throws IOException {
		response.resetBuffer();
		response.setStatus(problem.status().value());
		if (retryAfter != null) {
			response.setHeader("Retry-After", Long.toString(seconds(retryAfter)));
		}
		response.setContentType(PROBLEM_JSON);
		byte[] body = body(request, problem, detail, customizers);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

	/**
	 * The JSON body of a problem response.
	 * @param request the request
	 * @param problem the problem
	 * @param detail the detail
	 * @param customizers customize its members, in order
	 * @return the body, UTF-8
	 */
	static byte[] body(HttpServletRequest request, IdempotencyProblem problem, String detail,
			List<IdempotencyProblemCustomizer> customizers) {
		Map<String, Object> members = members(request, problem, detail);
		for (IdempotencyProblemCustomizer customizer : customizers) {
			Map<String, Object> customized = new LinkedHashMap<>(members);
			try {
				customizer.customize(request, problem, customized);
				members = customized;
			}
			catch (RuntimeException ex) {
				logger.warn("An IdempotencyProblemCustomizer failed; the problem is written without its changes", ex);
			}
		}
		members.put("type", problem.type().toString());
		members.put("status", problem.status().value());
		return ProblemJson.render(members);
	}

	private static Map<String, Object> members(HttpServletRequest request, IdempotencyProblem problem, String detail) {
		return ProblemJson.members(problem.neutral(), detail, request.getRequestURI());
	}

	/**
	 * {@code Retry-After} takes whole seconds; round up so clients never come back early.
	 */
	static long seconds(Duration duration) {
		return ProblemJson.seconds(duration);
	}

}
