package dev.idempo.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.validation.Errors;

/**
 * A route protected by configuration: the requests whose path matches its pattern and
 * whose method is one of its methods, with the settings of @Idempotent's attributes.
 *
 * @author idempo
 */
public class RouteProperties {

	/**
	 * Spring PathPattern of the paths it protects, matched against the path within the
	 * application, such as /payments/**.
	 */
	private @Nullable String path;

	/**
	 * Request methods it protects: some of POST, PATCH, PUT and DELETE (GET, HEAD,
	 * OPTIONS and TRACE never take part).
	 */
	private List<String> methods = new ArrayList<>(List.of("POST", "PATCH", "PUT", "DELETE"));

	/**
	 * How long its responses are kept, as @Idempotent(ttl). By default
	 * idempo.response-ttl.
	 */
	private @Nullable Duration ttl;

	/**
	 * Whether a request without a key gets 400, as @Idempotent(required).
	 */
	private boolean required;

	/**
	 * Whether its responses are stored and replayed, as @Idempotent(cacheResponse); false
	 * only keeps duplicates from running at the same time.
	 */
	private boolean cacheResponse = true;

	/**
	 * Which statuses its responses are stored for, in place of idempo.responses (what the
	 * entry leaves out takes idempo.responses' defaults).
	 */
	private @Nullable ResponseStorageProperties responses;

	/**
	 * What its fingerprints cover, in place of idempo.fingerprint.
	 */
	private @Nullable FingerprintProperties fingerprint;

	public @Nullable String getPath() {
		return this.path;
	}

	public void setPath(@Nullable String path) {
		this.path = path;
	}

	public List<String> getMethods() {
		return this.methods;
	}

	public void setMethods(List<String> methods) {
		this.methods = methods;
	}

	public @Nullable Duration getTtl() {
		return this.ttl;
	}

	public void setTtl(@Nullable Duration ttl) {
		this.ttl = ttl;
	}

	public boolean isRequired() {
		return this.required;
	}

	public void setRequired(boolean required) {
		this.required = required;
	}

	public boolean isCacheResponse() {
		return this.cacheResponse;
	}

	public void setCacheResponse(boolean cacheResponse) {
		this.cacheResponse = cacheResponse;
	}

	public @Nullable ResponseStorageProperties getResponses() {
		return this.responses;
	}

	public void setResponses(@Nullable ResponseStorageProperties responses) {
		this.responses = responses;
	}

	public @Nullable FingerprintProperties getFingerprint() {
		return this.fingerprint;
	}

	public void setFingerprint(@Nullable FingerprintProperties fingerprint) {
		this.fingerprint = fingerprint;
	}

	void validate(Errors errors, int index) {
		String field = "routes[" + index + "].";
		String property = "idempo.routes[" + index + "].";
		String pathProblem = RoutePatterns.problem(this.path);
		if (pathProblem != null) {
			errors.rejectValue(field + "path", property + "path", pathProblem);
		}
		if (this.methods.isEmpty()) {
			errors.rejectValue(field + "methods", property + "methods",
					"must name at least one of POST, PATCH, PUT and DELETE");
		}
		for (String method : this.methods) {
			String methodProblem = RoutePatterns.methodProblem(method);
			if (methodProblem != null) {
				errors.rejectValue(field + "methods", property + "methods", methodProblem);
			}
		}
		if (this.ttl != null) {
			IdempotencyProperties.rejectInvalidTtl(errors, field + "ttl", property + "ttl", this.ttl);
		}
		if (this.responses != null) {
			this.responses.validate(errors, field + "responses", property + "responses");
		}
		if (this.fingerprint != null) {
			this.fingerprint.validate(errors, field + "fingerprint", property + "fingerprint");
		}
	}

}
