package dev.idempo.web;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestEvent;
import jakarta.servlet.ServletRequestListener;

/**
 * The last resort that keeps keys from staying claimed: when a request ends and its
 * claimed key was neither stored nor released (an error with no error page to capture, a
 * container that gave up on an asynchronous request), the key is released.
 * <p>
 * It also marks each request it is told about when the request begins, so that
 * {@link IdempotencyFilter} knows whether it will hear of the request's end: only then
 * may an execution wait for an error page that might not come. MockMvc (and a container
 * without this listener) sends no such events, so there the filter ends every execution
 * when its dispatch returns.
 *
 * @author idempo
 */
public class IdempotencyRequestListener implements ServletRequestListener {

	private static final String NOTIFIED_ATTRIBUTE = IdempotencyRequestListener.class.getName() + ".NOTIFIED";

	@Override
	public void requestInitialized(ServletRequestEvent event) {
		event.getServletRequest().setAttribute(NOTIFIED_ATTRIBUTE, Boolean.TRUE);
	}

	@Override
	public void requestDestroyed(ServletRequestEvent event) {
		IdempotentExecution execution = IdempotentExecution.of(event.getServletRequest());
		if (execution != null) {
			execution.requestEnded();
		}
	}

	/**
	 * Whether the container told this listener that {@code request} began, so it will
	 * tell it when the request ends.
	 * @param request the request
	 * @return whether {@link #requestDestroyed} will be called for it
	 */
	static boolean willHearTheEndOf(ServletRequest request) {
		return request.getAttribute(NOTIFIED_ATTRIBUTE) != null;
	}

}
