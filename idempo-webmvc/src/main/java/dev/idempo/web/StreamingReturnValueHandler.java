package dev.idempo.web;

import java.io.IOException;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.MethodParameter;
import org.springframework.http.HttpEntity;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.AsyncHandlerMethodReturnValueHandler;
import org.springframework.web.method.support.HandlerMethodReturnValueHandler;
import org.springframework.web.method.support.ModelAndViewContainer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitterReturnValueHandler;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBodyReturnValueHandler;
import org.springframework.web.util.WebUtils;

/**
 * Recognises streaming responses at run time, whatever the handler declares (an
 * {@code Object}, a {@code ResponseEntity<?>}, a {@code Callable} of a
 * {@link StreamingResponseBody}): it wraps Spring MVC's return value handlers for
 * {@link StreamingResponseBody} and {@link ResponseBodyEmitter} (and so
 * {@code SseEmitter}), and before they start streaming it stops holding the body back and
 * marks the response as not to be stored.
 *
 * @author idempo
 */
public final class StreamingReturnValueHandler implements AsyncHandlerMethodReturnValueHandler {

	private final HandlerMethodReturnValueHandler delegate;

	private StreamingReturnValueHandler(HandlerMethodReturnValueHandler delegate) {
		this.delegate = delegate;
	}

	/**
	 * Wraps the streaming return value handlers of an adapter.
	 * @param adapter the adapter, already initialized
	 */
	public static void decorate(RequestMappingHandlerAdapter adapter) {
		List<HandlerMethodReturnValueHandler> handlers = adapter.getReturnValueHandlers();
		if (handlers == null) {
			return;
		}
		adapter.setReturnValueHandlers(handlers.stream().map(StreamingReturnValueHandler::decorate).toList());
	}

	private static HandlerMethodReturnValueHandler decorate(HandlerMethodReturnValueHandler handler) {
		if (handler instanceof ResponseBodyEmitterReturnValueHandler
				|| handler instanceof StreamingResponseBodyReturnValueHandler) {
			return new StreamingReturnValueHandler(handler);
		}
		return handler;
	}

	@Override
	public boolean supportsReturnType(MethodParameter returnType) {
		return this.delegate.supportsReturnType(returnType);
	}

	@Override
	public boolean isAsyncReturnValue(@Nullable Object returnValue, MethodParameter returnType) {
		return (this.delegate instanceof AsyncHandlerMethodReturnValueHandler async)
				&& async.isAsyncReturnValue(returnValue, returnType);
	}

	@Override
	public void handleReturnValue(@Nullable Object returnValue, MethodParameter returnType,
			ModelAndViewContainer mavContainer, NativeWebRequest webRequest) throws Exception {
		Object body = (returnValue instanceof HttpEntity<?> entity) ? entity.getBody() : returnValue;
		if (body instanceof StreamingResponseBody || body instanceof ResponseBodyEmitter) {
			streaming(webRequest);
		}
		this.delegate.handleReturnValue(returnValue, returnType, mavContainer, webRequest);
	}

	private static void streaming(NativeWebRequest webRequest) throws IOException {
		HttpServletRequest request = webRequest.getNativeRequest(HttpServletRequest.class);
		if (request == null || IdempotentExecution.of(request) == null) {
			return;
		}
		// the capture remembers that it streamed: the execution reads that when it ends
		HttpServletResponse response = webRequest.getNativeResponse(HttpServletResponse.class);
		CapturingResponse capture = (response != null) ? WebUtils.getNativeResponse(response, CapturingResponse.class)
				: null;
		if (capture != null) {
			capture.stopCapture();
		}
	}

}
