package dev.idempo.web;

import org.springframework.web.method.HandlerMethod;

/**
 * An {@link dev.idempo.Idempotent} handler is configured in a way idempo cannot honour.
 * Thrown while its settings are resolved, which auto-configuration does for every handler
 * at start-up, so that the application fails to start with the handler named and what to
 * change.
 *
 * @author idempo
 */
public class IdempotentHandlerException extends IllegalStateException {

	private final String handler;

	private final String action;

	/**
	 * Creates an exception.
	 * @param handlerMethod the handler
	 * @param problem what is wrong
	 * @param action what to do about it
	 */
	public IdempotentHandlerException(HandlerMethod handlerMethod, String problem, String action) {
		super(problem);
		this.handler = handlerMethod.toString();
		this.action = action;
	}

	/**
	 * The handler, as Spring MVC describes it.
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
