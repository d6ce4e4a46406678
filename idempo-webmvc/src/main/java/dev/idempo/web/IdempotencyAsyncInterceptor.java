package dev.idempo.web;

import java.util.concurrent.Callable;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.async.CallableProcessingInterceptor;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.DeferredResultProcessingInterceptor;

/**
 * Follows asynchronous handlers: when a request times out or fails while its
 * {@code Callable} still runs, the key is kept until the {@code Callable} returns, so
 * that a retry cannot run the handler alongside it.
 *
 * @author idempo
 */
public class IdempotencyAsyncInterceptor implements CallableProcessingInterceptor, DeferredResultProcessingInterceptor {

	/**
	 * The execution of the Callable running on this thread: after a timeout the request
	 * may be recycled by the time the Callable returns, so it is looked up up front.
	 */
	private final ThreadLocal<IdempotentExecution> running = new ThreadLocal<>();

	@Override
	public <T> void preProcess(NativeWebRequest request, Callable<T> task) {
		IdempotentExecution execution = execution(request);
		if (execution != null) {
			execution.callableStarted();
			this.running.set(execution);
		}
	}

	@Override
	public <T> void postProcess(NativeWebRequest request, Callable<T> task, @Nullable Object concurrentResult) {
		IdempotentExecution execution = this.running.get();
		if (execution != null) {
			this.running.remove();
			execution.callableReturned();
		}
	}

	@Override
	public <T> Object handleTimeout(NativeWebRequest request, Callable<T> task) {
		abandoned(request);
		return RESULT_NONE;
	}

	@Override
	public <T> Object handleError(NativeWebRequest request, Callable<T> task, Throwable t) {
		abandoned(request);
		return RESULT_NONE;
	}

	@Override
	public <T> boolean handleTimeout(NativeWebRequest request, DeferredResult<T> deferredResult) {
		abandoned(request);
		return true;
	}

	@Override
	public <T> boolean handleError(NativeWebRequest request, DeferredResult<T> deferredResult, Throwable t) {
		abandoned(request);
		return true;
	}

	private static void abandoned(NativeWebRequest request) {
		IdempotentExecution execution = execution(request);
		if (execution != null) {
			execution.abandoned();
		}
	}

	private static @Nullable IdempotentExecution execution(NativeWebRequest request) {
		try {
			HttpServletRequest servletRequest = request.getNativeRequest(HttpServletRequest.class);
			return (servletRequest != null) ? IdempotentExecution.of(servletRequest) : null;
		}
		catch (IllegalStateException ex) {
			// the container has recycled the request already
			return null;
		}
	}

}
