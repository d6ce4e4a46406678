package dev.idempo.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.IdempotencyProblem;

/**
 * Writes idempo's own error responses as {@code application/problem+json}. They are
 * written directly rather than thrown, so that no application exception handler can turn
 * them into a 500.
 *
 * @author idempo
 */
final class ProblemResponses {

	static final String PROBLEM_JSON = "application/problem+json";

	private ProblemResponses() {
	}

	static void write(HttpServletRequest request, HttpServletResponse response, IdempotencyProblem problem,
			String detail, @Nullable Duration retryAfter) throws IOException {
		response.resetBuffer();
		response.setStatus(problem.status().value());
		if (retryAfter != null) {
			response.setHeader("Retry-After", Long.toString(seconds(retryAfter)));
		}
		response.setContentType(PROBLEM_JSON);
		byte[] body = body(request, problem, detail);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

	/**
	 * The JSON body of a problem response.
	 * @param request the request
	 * @param problem the problem
	 * @param detail the detail
	 * @return the body, UTF-8
	 */
	static byte[] body(HttpServletRequest request, IdempotencyProblem problem, String detail) {
		StringBuilder json = new StringBuilder(256);
		json.append("{\"type\":");
		appendString(json, problem.type().toString());
		json.append(",\"title\":");
		appendString(json, problem.title());
		json.append(",\"status\":").append(problem.status().value());
		json.append(",\"detail\":");
		appendString(json, detail);
		json.append(",\"instance\":");
		appendString(json, request.getRequestURI());
		json.append('}');
		return json.toString().getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * {@code Retry-After} takes whole seconds; round up so clients never come back early.
	 */
	static long seconds(Duration duration) {
		return (duration.getNano() > 0) ? duration.getSeconds() + 1 : duration.getSeconds();
	}

	private static void appendString(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20 || c > 0x7E) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

}
