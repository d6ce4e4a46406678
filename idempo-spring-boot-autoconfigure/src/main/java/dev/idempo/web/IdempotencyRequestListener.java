package dev.idempo.web;

import jakarta.servlet.ServletRequestEvent;
import jakarta.servlet.ServletRequestListener;

/**
 * The last resort that keeps keys from staying claimed: when a request ends and its
 * claimed key was neither stored nor released (an error with no error page to capture, a
 * container that gave up on an asynchronous request), the key is released.
 *
 * @author idempo
 */
public class IdempotencyRequestListener implements ServletRequestListener {

	@Override
	public void requestDestroyed(ServletRequestEvent event) {
		IdempotentExecution execution = IdempotentExecution.of(event.getServletRequest());
		if (execution != null) {
			execution.requestEnded();
		}
	}

}
