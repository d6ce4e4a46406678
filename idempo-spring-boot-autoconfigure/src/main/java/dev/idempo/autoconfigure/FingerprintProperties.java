package dev.idempo.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import dev.idempo.core.FingerprintOptions;

import org.springframework.validation.Errors;

/**
 * What a request's fingerprint covers beyond its method, path, query and body.
 *
 * @author idempo
 */
public class FingerprintProperties {

	/**
	 * JSON Pointers (RFC 6901) of fields left out of the fingerprint of a JSON body
	 * (application/json, application/*+json), such as /timestamp or /meta/requestId: a
	 * retry that differs only there replays instead of getting 422. What remains is
	 * fingerprinted in a canonical form (members sorted, whitespace ignored); bodies that
	 * are not JSON or do not parse are fingerprinted as sent.
	 */
	private List<String> ignoredFields = new ArrayList<>();

	/**
	 * Request headers whose values are part of the fingerprint (case-insensitive); a
	 * header that is absent differs from one sent empty.
	 */
	private List<String> headers = new ArrayList<>();

	public List<String> getIgnoredFields() {
		return this.ignoredFields;
	}

	public void setIgnoredFields(List<String> ignoredFields) {
		this.ignoredFields = ignoredFields;
	}

	public List<String> getHeaders() {
		return this.headers;
	}

	public void setHeaders(List<String> headers) {
		this.headers = headers;
	}

	/**
	 * Rejects invalid JSON Pointers and header names.
	 * @param errors the errors of the bound object
	 * @param field the path of this object in it, such as {@code fingerprint}
	 * @param property the property prefix, such as {@code idempo.fingerprint}
	 */
	void validate(Errors errors, String field, String property) {
		for (String pointer : this.ignoredFields) {
			String problem = FingerprintOptions.pointerProblem(pointer);
			if (problem != null) {
				errors.rejectValue(field + ".ignoredFields", property + ".ignored-fields", problem);
			}
		}
		for (String header : this.headers) {
			if (!header.trim().matches(IdempotencyProperties.HEADER_NAME)) {
				errors.rejectValue(field + ".headers", property + ".headers",
						"'" + header + "' is not an HTTP header name (a token)");
			}
		}
	}

	/**
	 * The options these properties describe.
	 * @return the options
	 */
	public FingerprintOptions toOptions() {
		return FingerprintOptions.of(this.ignoredFields, this.headers);
	}

}
