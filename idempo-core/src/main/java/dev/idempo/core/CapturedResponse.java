package dev.idempo.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A response as the handler produced it: status, headers (in the order and case they were
 * set) and body bytes exactly as written.
 *
 * @param status the HTTP status code
 * @param headers header names to their values
 * @param body the body bytes
 * @author idempo
 */
public record CapturedResponse(int status, Map<String, List<String>> headers, byte[] body) {

	public CapturedResponse {
		Objects.requireNonNull(headers, "headers");
		Objects.requireNonNull(body, "body");
		Map<String, List<String>> copy = new LinkedHashMap<>();
		headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
		headers = Collections.unmodifiableMap(copy);
	}

	/**
	 * All values of a header, matching its name case-insensitively.
	 * @param name the header name
	 * @return the values, empty if absent
	 */
	public List<String> header(String name) {
		List<String> values = new ArrayList<>();
		this.headers.forEach((headerName, headerValues) -> {
			if (headerName.equalsIgnoreCase(name)) {
				values.addAll(headerValues);
			}
		});
		return values;
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof CapturedResponse that) && this.status == that.status
				&& this.headers.equals(that.headers) && Arrays.equals(this.body, that.body);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.status, this.headers, Arrays.hashCode(this.body));
	}

	@Override
	public String toString() {
		return "CapturedResponse[status=" + this.status + ", headers=" + this.headers + ", body=" + this.body.length
				+ " bytes]";
	}

}
