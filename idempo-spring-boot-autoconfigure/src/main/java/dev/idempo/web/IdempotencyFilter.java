package dev.idempo.web;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.WebUtils;

/**
 * What the servlet API forces on top of the interceptor: it wraps {@code POST},
 * {@code PUT}, {@code PATCH} and {@code DELETE} requests so that the interceptor can read
 * the body for the fingerprint before the handler does, and so that the response bytes
 * are held back and stored before they reach the client. When the request has finished
 * (including its last asynchronous dispatch) it stores the response or releases the key,
 * then lets the bytes go. Requests that claim no key pay for two thin wrappers and
 * nothing else.
 *
 * @author idempo
 */
public class IdempotencyFilter extends OncePerRequestFilter {

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return !IdempotencyInterceptor.isProtectedMethod(request.getMethod());
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return false;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		CapturingResponse capture = WebUtils.getNativeResponse(response, CapturingResponse.class);
		HttpServletRequest wrappedRequest = request;
		HttpServletResponse wrappedResponse = response;
		if (capture == null) {
			if (WebUtils.getNativeRequest(request, BufferedBodyRequest.class) == null) {
				wrappedRequest = new BufferedBodyRequest(request);
			}
			capture = new CapturingResponse(response);
			wrappedResponse = capture;
		}
		try {
			chain.doFilter(wrappedRequest, wrappedResponse);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			IdempotentExecution execution = IdempotentExecution.of(request);
			if (execution != null) {
				capture.discard();
				execution.finish(null, ex);
			}
			throw ex;
		}
		IdempotentExecution execution = IdempotentExecution.of(request);
		if (wrappedRequest.isAsyncStarted()) {
			if (execution != null && !isAsyncDispatch(request)) {
				wrappedRequest.getAsyncContext().addListener(execution.asyncListener());
			}
			return;
		}
		if (execution != null) {
			execution.finish(capture, null);
		}
		capture.flushToClient();
	}

}
