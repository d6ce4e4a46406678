package dev.idempo.method;

/**
 * An {@link dev.idempo.Idempotent} method, or a class, is annotated in a way idempo
 * cannot honour: found while the application starts (when its bean is proxied, or when
 * the settings of every idempotent method are resolved), so that it fails with the method
 * named and what to change.
 *
 * @author idempo
 */
public class IdempotentMethodException extends IllegalStateException {

	private final String method;

	private final String action;

	/**
	 * Creates an exception.
	 * @param method the method (or class), as it should be named to the user
	 * @param problem what is wrong
	 * @param action what to do about it
	 */
	public IdempotentMethodException(String method, String problem, String action) {
		super(problem);
		this.method = method;
		this.action = action;
	}

	/**
	 * The method (or class).
	 * @return its description
	 */
	public String getMethod() {
		return this.method;
	}

	/**
	 * What to do about it.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}

}
