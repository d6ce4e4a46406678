package dev.idempo;

/**
 * Another call holds the idempotency key of this call, in this or another instance: the
 * work did not run. Thrown at once, never after waiting, so that a message listener
 * container redelivers the message later or a caller retries.
 *
 * @author idempo
 */
public class IdempotencyInProgressException extends RuntimeException {

	private final String scope;

	/**
	 * Creates an exception.
	 * @param scope what the key belongs to: the method's scope or the template's
	 */
	public IdempotencyInProgressException(String scope) {
		super("Another call with the same idempotency key is still running (" + scope + "); retry later");
		this.scope = scope;
	}

	/**
	 * What the key belongs to: {@code method:<class>#<method>(<parameter types>)} for an
	 * {@link Idempotent} method, {@code template:<scope>} for the
	 * {@link IdempotencyTemplate}.
	 * @return the scope
	 */
	public String getScope() {
		return this.scope;
	}

}
