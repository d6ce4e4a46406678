package dev.idempo.web.hostile;

import org.jspecify.annotations.Nullable;

import dev.idempo.web.hostile.RawExchange.Ending;

/**
 * One hostile request and what the contract says must come of it.
 *
 * @param name the name the case is reported by
 * @param endpoint the handler's name in {@link dev.idempo.web.testapp.Executions}
 * @param request the bytes sent
 * @param ending what the client does after sending them
 * @param expected the outcome
 * @author idempo
 */
record HostileCase(String name, String endpoint, byte[] request, Ending ending, Expected expected) {

	@Override
	public String toString() {
		return this.name;
	}

	/**
	 * What must come of a case. Every outcome but {@link Executes} and {@link Replays} is
	 * a 4xx that runs no handler; none is ever a 5xx.
	 */
	sealed interface Expected {

	}

	/**
	 * idempo answers with its own problem ({@code application/problem+json} with the
	 * documented type); nothing is stored and no handler runs.
	 *
	 * @param status the status
	 * @param slug the problem type's last segment, such as {@code invalid-key}
	 */
	record Problem(int status, String slug) implements Expected {

		static Problem invalidKey() {
			return new Problem(400, "invalid-key");
		}

		static Problem missingKey() {
			return new Problem(400, "missing-key");
		}

		static Problem tooLarge() {
			return new Problem(413, "request-too-large");
		}

		static Problem keyReused() {
			return new Problem(422, "key-reused");
		}

	}

	/**
	 * Something other than idempo refuses the request before a handler runs: nothing is
	 * stored and no handler runs.
	 *
	 * @param status the status
	 * @param by who refuses it
	 */
	record Refused(int status, Refuser by) implements Expected {

		static Refused container() {
			return new Refused(400, Refuser.CONTAINER);
		}

		static Refused firewall() {
			return new Refused(400, Refuser.FIREWALL);
		}

		static Refused body() {
			return new Refused(400, Refuser.BODY);
		}

	}

	/**
	 * Who refuses a request that idempo does not answer. The test application sets
	 * {@code X-Request-Id} in a filter that runs after idempo's, so its presence tells
	 * whether the request got past idempo's filter.
	 */
	enum Refuser {

		/**
		 * Tomcat's HTTP parser, before any filter: a malformed request line, header or
		 * framing header, answered with Tomcat's own HTML page.
		 */
		CONTAINER,

		/**
		 * Spring Security's {@code StrictHttpFirewall}, which refuses header values with
		 * ISO control characters (so the C1 range {@code 0x80}-{@code 0x9F} of bytes read
		 * as ISO-8859-1) when idempo's filter first reads the key header, and paths and
		 * methods it does not trust: Boot's JSON error page, without passing idempo's
		 * filter.
		 */
		FIREWALL,

		/**
		 * Tomcat, while idempo reads the body for the fingerprint (malformed chunks, a
		 * body cut short, a read timeout): Boot's JSON error page, before any claim.
		 */
		BODY,

		/** Spring MVC finds no handler for the method and path: idempo takes no part. */
		NO_HANDLER,

		/** Spring Security refuses the credentials before the request reaches idempo. */
		AUTHENTICATION

	}

	/**
	 * A valid key never seen before: the handler runs once, its response is stored under
	 * the key (for the caller that {@code authorization} makes) and replayed byte for
	 * byte to the same bytes sent again.
	 *
	 * @param key the key as idempo must have parsed it
	 * @param authorization the request's {@code Authorization} header, {@code null} for
	 * an anonymous caller
	 * @param status the status of the response
	 */
	record Executes(String key, @Nullable String authorization, int status) implements Expected {

		Executes(String key) {
			this(key, null, 200);
		}

		Executes(String key, String authorization) {
			this(key, authorization, 200);
		}

	}

	/**
	 * A key that is another one after unquoting or trimming (or the same one through the
	 * alias header, or the same body in other framing): the other key's stored response
	 * is replayed byte for byte, no handler runs, nothing new is stored.
	 *
	 * @param key the key whose response is replayed
	 */
	record Replays(String key) implements Expected {

	}

	/**
	 * A valid new key whose request Spring MVC refuses before the handler method runs
	 * (unreadable JSON, an unsupported media type, a missing or unconvertible parameter):
	 * the handler never runs, nothing is stored and the key stays free, so the same
	 * request is answered afresh and {@code corrected}, the request put right, runs the
	 * handler under that key.
	 *
	 * @param status the status Spring MVC answers
	 * @param key the key
	 * @param corrected the corrected request with the key, {@code null} if the case has
	 * none
	 * @param correctedStatus the status of the corrected request
	 */
	record RejectedBeforeHandler(int status, String key, byte @Nullable [] corrected,
			int correctedStatus) implements Expected {

		RejectedBeforeHandler(int status, String key) {
			this(status, key, null, 0);
		}

	}

	/**
	 * A body that never arrives in full: the server answers {@code status} or closes the
	 * connection without an answer within the container's timeout; nothing is stored, no
	 * handler runs, and the key stays free: {@code complete}, the same request in full,
	 * then runs the handler.
	 *
	 * @param status the status, {@code -1} if the connection is closed without an answer
	 * @param key the key the request carried
	 * @param complete the complete request with the key
	 */
	record Abandoned(int status, String key, byte[] complete) implements Expected {

	}

	/**
	 * A body of declared length that never arrives in full, to a handler that reads none
	 * of it: the key is claimed before the body is read (the body streams), so the
	 * handler runs; reading the rest to fingerprint it fails, the server answers
	 * {@code status} (the container's answer to the broken body), and the handler's
	 * response is stored under the digest of the no bytes it read, with the declared
	 * length: {@code complete}, the same request in full, replays it if it declares the
	 * same length ({@code replays}), else gets 422; the handler never runs a second time.
	 *
	 * @param status the status
	 * @param key the key the request carried
	 * @param complete the complete request with the key
	 * @param replays whether the complete request declares the same length
	 */
	record AbandonedAfterHandler(int status, String key, byte[] complete, boolean replays) implements Expected {

	}

}
