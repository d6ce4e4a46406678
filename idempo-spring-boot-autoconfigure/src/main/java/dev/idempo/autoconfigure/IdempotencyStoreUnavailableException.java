package dev.idempo.autoconfigure;

import dev.idempo.autoconfigure.IdempotencyProperties.StoreType;

/**
 * The configured store cannot be created: a dependency or a bean it needs is missing.
 * Explained at start-up by {@link IdempotencyFailureAnalyzer}.
 *
 * @author idempo
 */
public class IdempotencyStoreUnavailableException extends RuntimeException {

	private final StoreType storeType;

	private final String action;

	/**
	 * Creates an exception.
	 * @param storeType the configured store type
	 * @param problem what is wrong
	 * @param action what to do about it
	 */
	public IdempotencyStoreUnavailableException(StoreType storeType, String problem, String action) {
		super(problem);
		this.storeType = storeType;
		this.action = action;
	}

	/**
	 * The configured store type.
	 * @return the store type
	 */
	public StoreType getStoreType() {
		return this.storeType;
	}

	/**
	 * What to do about it.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}

}
