package dev.idempo.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Writes idempo's own error responses as {@code application/problem+json}. They are
 * written directly rather than thrown, so that no application exception handler can turn
 * them into a 500.
 *
 * @author idempo
 */
final class ProblemResponses {

	static final String PROBLEM_JSON = "application/problem+json";

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
		StringBuilder json = new StringBuilder(256).append('{');
		members.forEach((name, value) -> {
			if (name == null) {
				return;
			}
			if (json.length() > 1) {
				json.append(',');
			}
			appendString(json, name);
			json.append(':');
			if (value == null) {
				json.append("null");
			}
			else if (value instanceof Boolean || (value instanceof Number number && isFinite(number))) {
				json.append(value);
			}
			else {
				appendString(json, value.toString());
			}
		});
		json.append('}');
		return json.toString().getBytes(StandardCharsets.UTF_8);
	}

	private static boolean isFinite(Number number) {
		return !(number instanceof Double || number instanceof Float) || Double.isFinite(number.doubleValue());
	}

	private static Map<String, Object> members(HttpServletRequest request, IdempotencyProblem problem, String detail) {
		Map<String, Object> members = new LinkedHashMap<>();
		members.put("type", problem.type().toString());
		members.put("title", problem.title());
		members.put("status", problem.status().value());
		members.put("detail", detail);
		members.put("instance", request.getRequestURI());
		return members;
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
