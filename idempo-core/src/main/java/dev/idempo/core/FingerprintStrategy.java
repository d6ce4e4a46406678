package dev.idempo.core;

/**
 * Decides what of a request is fingerprinted, on every web stack, for example to leave
 * out a client timestamp that differs between a request and its retry. Declare a bean of
 * this type to replace the default ({@link #DEFAULT}: method, path, query string and
 * body). The fingerprint decides whether a retry with a known key is the same request
 * (replayed) or another one (422).
 * <p>
 * Runs before the handler, once the body has been read: on Spring MVC on the request
 * thread, on WebFlux on the thread that delivered the body's last bytes, often an event
 * loop, where it must not block. On Spring MVC, a servlet-typed
 * {@code dev.idempo.web.RequestFingerprintStrategy} bean wins over this one.
 *
 * @author idempo
 */
@FunctionalInterface
public interface FingerprintStrategy {

	/**
	 * The default: {@link RequestFingerprints#of} over method, path, query string and
	 * body (for a form, the canonical bytes of its parameters and parts), the same
	 * fingerprint on Spring MVC and WebFlux.
	 */
	FingerprintStrategy DEFAULT = (request, body) -> RequestFingerprints.of(request.method(), request.path(),
			request.rawQuery(), body);

	/**
	 * Fingerprints a request.
	 * @param request the request
	 * @param body the request body as sent, or, when
	 * {@code idempo.fingerprint.ignored-fields} applies to a JSON body, the canonical
	 * form of what remains of it, or, for a form or multipart body, the canonical bytes
	 * of its parsed parameters and parts (the values of the headers of
	 * {@code idempo.fingerprint.headers} are added to what this returns)
	 * @return a fingerprint: equal for requests that are the same, different otherwise;
	 * typically {@link RequestFingerprints#of} over what counts
	 */
	String fingerprint(ProtectedRequest request, byte[] body);

}
