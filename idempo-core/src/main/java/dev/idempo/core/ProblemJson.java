package dev.idempo.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Renders idempo's problem responses ({@code application/problem+json}, RFC 9457) without
 * a JSON library, the same bytes from every web stack.
 *
 * @author idempo
 */
public final class ProblemJson {

	/** The media type of problem responses. */
	public static final String MEDIA_TYPE = "application/problem+json";

	private static final Log logger = LogFactory.getLog(ProblemJson.class);

	private ProblemJson() {
	}

	/**
	 * The body of a problem response after {@code customizers} saw its members: each
	 * works on a copy, so that one that throws is logged and its changes left out;
	 * {@code type} and {@code status} stay the problem's whatever they did.
	 * @param problem the problem
	 * @param detail the detail
	 * @param request the request (its path is the {@code instance})
	 * @param customizers the customizers, in order
	 * @return the JSON, UTF-8
	 */
	public static byte[] render(IdempotencyProblemType problem, String detail, ProtectedRequest request,
			List<ProblemCustomizer> customizers) {
		Map<String, Object> members = members(problem, detail, request.path());
		for (ProblemCustomizer customizer : customizers) {
			Map<String, Object> customized = new LinkedHashMap<>(members);
			try {
				customizer.customize(request, problem, customized);
				members = customized;
			}
			catch (RuntimeException ex) {
				logger.warn("A ProblemCustomizer failed; the problem is written without its changes", ex);
			}
		}
		members.put("type", problem.type().toString());
		members.put("status", problem.status());
		return render(members);
	}

	/**
	 * The standard members of a problem, in the order they are written.
	 * @param problem the problem
	 * @param detail the detail
	 * @param instance the request's path
	 * @return the members, mutable
	 */
	public static Map<String, Object> members(IdempotencyProblemType problem, String detail, String instance) {
		Map<String, Object> members = new LinkedHashMap<>();
		members.put("type", problem.type().toString());
		members.put("title", problem.title());
		members.put("status", problem.status());
		members.put("detail", detail);
		members.put("instance", instance);
		return members;
	}

	/**
	 * The JSON object of {@code members}: booleans and finite numbers as such, everything
	 * else as a string, with every non-printable or non-ASCII character escaped.
	 * @param members the members, in order; a {@code null} name is left out
	 * @return the JSON, UTF-8
	 */
	public static byte[] render(Map<String, Object> members) {
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

	/**
	 * The value of a {@code Retry-After} header: whole seconds, rounded up so that
	 * clients never come back early.
	 * @param duration the duration
	 * @return the seconds
	 */
	public static long seconds(Duration duration) {
		return (duration.getNano() > 0) ? duration.getSeconds() + 1 : duration.getSeconds();
	}

	private static boolean isFinite(Number number) {
		return !(number instanceof Double || number instanceof Float) || Double.isFinite(number.doubleValue());
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
