package dev.idempo.store;

/**
 * A {@link LockingStore} could not do its work: unreachable, timed out, or answered
 * something it could not read.
 *
 * @author idempo
 */
public class LockingStoreException extends RuntimeException {

	public LockingStoreException(String message) {
		super(message);
	}

	public LockingStoreException(String message, Throwable cause) {
		super(message, cause);
	}

}
