package dev.idempo;

/**
 * An idempotency key was used again with other arguments than the call that stored its
 * result: the work did not run, and the stored result was not returned, because it
 * belongs to another call. For an {@link Idempotent} method the arguments are compared by
 * a digest of their JSON; for the {@link IdempotencyTemplate}, only when the call passes
 * {@link IdempotencyTemplate.Options#request(Object) a request} to compare.
 *
 * @author idempo
 */
public class IdempotencyKeyReusedException extends RuntimeException {

	private final String scope;

	/**
	 * Creates an exception.
	 * @param scope what the key belongs to
	 */
	public IdempotencyKeyReusedException(String scope) {
		super("This idempotency key was already used with other arguments (" + scope
				+ "); the stored result belongs to that call and is not returned");
		this.scope = scope;
	}

	/**
	 * What the key belongs to, as in {@link IdempotencyInProgressException#getScope()}.
	 * @return the scope
	 */
	public String getScope() {
		return this.scope;
	}

}
