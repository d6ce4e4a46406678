package dev.idempo.webflux;

import org.jspecify.annotations.Nullable;

import org.springframework.web.method.HandlerMethod;

/**
 * An {@link dev.idempo.Idempotent} WebFlux handler is configured in a way idempo cannot
 * honour (a TTL that is not a valid duration, {@code transactional = true}). Thrown while
 * its policy is resolved, which auto-configuration does for every handler at start-up, so
 * that the application fails to start with a failure report that names the handler and
 * says what to change, as Spring MVC's handlers get.
 *
 * @author idempo
 */
public class IdempotentWebFluxHandlerException extends IllegalStateException {

	private final String handler;

	private final String action;

	/**
	 * Creates an exception.
	 * @param handlerMethod the handler
	 * @param problem what is wrong
	 * @param action what to do about it
	 * @param cause what made it wrong, if anything did
	 */
	public IdempotentWebFluxHandlerException(HandlerMethod handlerMethod, String problem, String action,
			@Nullable Throwable cause) {
		super(problem, cause);
		this.handler = handlerMethod.toString();
		this.action = action;
	}

	/**
	 * The handler, as Spring describes it ({@code com.example.PaymentController#pay()}).
	 * @return the handler
	 */
	public String getHandler() {
		return this.handler;
	}

	/**
	 * What to do about it.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}

}
