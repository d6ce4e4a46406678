package dev.idempo.core;

/**
 * The idempotency key header is present but unusable.
 *
 * @author idempo
 */
public class InvalidIdempotencyKeyException extends RuntimeException {

	public InvalidIdempotencyKeyException(String message) {
		super(message);
	}

}
