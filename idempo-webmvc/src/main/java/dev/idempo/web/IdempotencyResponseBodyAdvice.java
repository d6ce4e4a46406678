package dev.idempo.web;

import java.io.IOException;
import java.io.UncheckedIOException;

import org.jspecify.annotations.Nullable;

import org.springframework.core.MethodParameter;
import org.springframework.core.io.Resource;
import org.springframework.http.MediaType;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServerHttpRequest;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.http.server.ServletServerHttpRequest;
import org.springframework.http.server.ServletServerHttpResponse;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyAdvice;
import org.springframework.web.util.WebUtils;

/**
 * Sees a protected handler's body object before it is converted. When its size is known
 * up front ({@code byte[]}, {@code String}, a {@link Resource} with a known length) and
 * it exceeds {@code idempo.max-response-size}, the response is let through unbuffered at
 * once instead of being held back until the limit is hit. It never changes the body: the
 * bytes that are stored are the bytes the converter writes, captured by
 * {@link CapturingResponse}, which also covers responses no advice sees ({@code void}
 * handlers with {@code @ResponseStatus}, {@code sendRedirect}).
 *
 * @author idempo
 */
@ControllerAdvice
public class IdempotencyResponseBodyAdvice implements ResponseBodyAdvice<Object> {

	private final long maxResponseSize;

	/**
	 * Creates an advice.
	 * @param maxResponseSize the largest body that is stored
	 */
	public IdempotencyResponseBodyAdvice(long maxResponseSize) {
		this.maxResponseSize = maxResponseSize;
	}

	@Override
	public boolean supports(MethodParameter returnType, Class<? extends HttpMessageConverter<?>> converterType) {
		return true;
	}

	@Override
	public @Nullable Object beforeBodyWrite(@Nullable Object body, MethodParameter returnType,
			MediaType selectedContentType, Class<? extends HttpMessageConverter<?>> selectedConverterType,
			ServerHttpRequest request, ServerHttpResponse response) {
		if (request instanceof ServletServerHttpRequest transactionalRequest
				&& transactionalRequest.getServletRequest().getAttribute(TransactionalExecution.ATTRIBUTE) != null) {
			// a transactional handler's writes are flushed before its body is written
			TransactionalExecution execution = TransactionalExecution.of(transactionalRequest.getServletRequest());
			if (execution != null) {
				execution.flushBeforeBody();
			}
			return body;
		}
		if (body == null || !(request instanceof ServletServerHttpRequest servletRequest)
				|| !(response instanceof ServletServerHttpResponse servletResponse)
				|| IdempotentExecution.of(servletRequest.getServletRequest()) == null) {
			return body;
		}
		if (knownSize(body) > this.maxResponseSize) {
			CapturingResponse capture = WebUtils.getNativeResponse(servletResponse.getServletResponse(),
					CapturingResponse.class);
			if (capture != null) {
				try {
					capture.overflow();
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			}
		}
		return body;
	}

	private static long knownSize(Object body) {
		if (body instanceof byte[] bytes) {
			return bytes.length;
		}
		if (body instanceof CharSequence text) {
			// every char takes at least one byte in any charset a response uses
			return text.length();
		}
		if (body instanceof Resource resource && resource.isFile()) {
			try {
				return resource.contentLength();
			}
			catch (IOException ex) {
				return -1;
			}
		}
		return -1;
	}

}
