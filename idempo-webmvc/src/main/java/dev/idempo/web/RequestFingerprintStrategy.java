package dev.idempo.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;

import dev.idempo.core.FingerprintStrategy;

/**
 * Decides what of a request is fingerprinted, for example to leave out a client timestamp
 * that differs between a request and its retry. Declare a bean of this type to replace
 * the default ({@link #DEFAULT}: method, path, query string and body, or the parsed
 * parameters and parts of a form). The fingerprint decides whether a retry with a known
 * key is the same request (replayed) or another one (422).
 * <p>
 * Spring MVC only. A {@link FingerprintStrategy} does the same on every web stack (Spring
 * MVC and WebFlux) over a stack-neutral view of the request; on Spring MVC, a bean of
 * this type wins over one of that type. New code should prefer
 * {@link FingerprintStrategy}; this type stays for what needs the servlet request.
 *
 * @author idempo
 */
@FunctionalInterface
public interface RequestFingerprintStrategy {

	/**
	 * The default: {@link RequestFingerprint#of} over method, path, query string and
	 * body; form and multipart bodies by their parsed parameters and parts.
	 */
	RequestFingerprintStrategy DEFAULT = (request, body) -> RequestFingerprint.of(request.getMethod(),
			request.getRequestURI(), request.getQueryString(),
			RequestFingerprint.isForm(request.getContentType()) ? RequestFingerprint.canonicalForm(request) : body);

	/**
	 * Fingerprints a request, on the request thread, before the handler runs.
	 * @param request the request (its body already read)
	 * @param body the request body as sent, or, when
	 * {@code idempo.fingerprint.ignored-fields} applies to a JSON body, the canonical
	 * form of what remains of it (the values of the headers of
	 * {@code idempo.fingerprint.headers} are added to what this returns; for forms, what
	 * the container parsed is in the request's parameters and parts)
	 * @return a fingerprint: equal for requests that are the same, different otherwise;
	 * typically {@link RequestFingerprint#of} over what counts
	 * @throws IOException if the request's parts cannot be read
	 */
	String fingerprint(HttpServletRequest request, byte[] body) throws IOException;

	/**
	 * A stack-neutral strategy as a Spring MVC one: it gets the body as this type does,
	 * but for a form or multipart body the canonical bytes of its parsed parameters and
	 * parts ({@link RequestFingerprint#canonicalForm}), as on WebFlux.
	 * @param strategy the strategy
	 * @return the same strategy, over the servlet request; {@link #DEFAULT} for
	 * {@link FingerprintStrategy#DEFAULT}, whose fingerprints are the same
	 */
	static RequestFingerprintStrategy of(FingerprintStrategy strategy) {
		if (strategy == FingerprintStrategy.DEFAULT) {
			return DEFAULT;
		}
		return (request, body) -> strategy.fingerprint(new ServletProtectedRequest(request),
				RequestFingerprint.isForm(request.getContentType()) ? RequestFingerprint.canonicalForm(request) : body);
	}

}
