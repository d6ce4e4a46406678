package dev.idempo.web;

import java.io.IOException;
import java.util.List;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;

import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.WebUtils;

/**
 * What the servlet API forces on top of the interceptor: it wraps {@code POST},
 * {@code PUT}, {@code PATCH} and {@code DELETE} requests so that the interceptor can
 * fingerprint the body (digested as the handler reads it, or, where it must be, read
 * whole before the handler), and so that the response bytes are held back and stored
 * before they reach the client. When the request has finished (including its last
 * asynchronous dispatch) it stores the response or releases the key, then lets the bytes
 * go. Requests that claim no key pay for two thin wrappers and nothing else.
 *
 * @author idempo
 */
public class IdempotencyFilter extends OncePerRequestFilter {

	private final List<String> keyHeaders;

	private final BufferBudget budget;

	/**
	 * Creates a filter that wraps every protected-method request, without a budget.
	 */
	public IdempotencyFilter() {
		this(List.of(), BufferBudget.UNLIMITED);
	}

	/**
	 * Creates a filter.
	 * @param keyHeaders the key headers; a request with none of them is never wrapped
	 * (nothing of it is buffered), empty to wrap every request
	 * @param budget the bytes of request bodies held at once
	 */
	public IdempotencyFilter(List<String> keyHeaders, BufferBudget budget) {
		this.keyHeaders = List.copyOf(keyHeaders);
		this.budget = budget;
	}

	/** Whether the request carries a key: only then can it need its body or response. */
	private boolean hasKey(HttpServletRequest request) {
		if (this.keyHeaders.isEmpty()) {
			return true;
		}
		for (String header : this.keyHeaders) {
			if (request.getHeader(header) != null) {
				return true;
			}
		}
		return false;
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		// error dispatches report GET whatever the original method was
		return request.getDispatcherType() != DispatcherType.ERROR
				&& !IdempotencyInterceptor.isProtectedMethod(request.getMethod());
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return false;
	}

	@Override
	protected boolean shouldNotFilterErrorDispatch() {
		return false;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (request.getDispatcherType() == DispatcherType.ERROR) {
			filterErrorDispatch(request, response, chain);
			return;
		}
		CapturingResponse capture = WebUtils.getNativeResponse(response, CapturingResponse.class);
		if (capture == null && !hasKey(request)) {
			// nothing of a request without a key is kept: its handler runs unprotected
			// or it is refused before its body is read
			chain.doFilter(request, response);
			return;
		}
		HttpServletRequest wrappedRequest = request;
		HttpServletResponse wrappedResponse = response;
		BufferedBodyRequest ownRequest = null;
		CapturingResponse ownResponse = null;
		if (capture == null) {
			if (WebUtils.getNativeRequest(request, BufferedBodyRequest.class) == null) {
				ownRequest = new BufferedBodyRequest(request, this.budget);
				wrappedRequest = ownRequest;
			}
			capture = new CapturingResponse(response, this.budget);
			ownResponse = capture;
			wrappedResponse = capture;
		}
		try {
			doFilterWrapped(request, wrappedRequest, wrappedResponse, capture, chain);
		}
		finally {
			if (ownRequest != null || ownResponse != null) {
				releaseBudget(wrappedRequest, new BudgetRelease(ownRequest, ownResponse));
			}
		}
	}

	private static void releaseBudget(HttpServletRequest wrappedRequest, BudgetRelease release) {
		if (wrappedRequest.isAsyncStarted()) {
			// the body and the held response stay with the request until it completes
			wrappedRequest.getAsyncContext().addListener(release);
		}
		else {
			release.run();
		}
	}

	private void doFilterWrapped(HttpServletRequest request, HttpServletRequest wrappedRequest,
			HttpServletResponse wrappedResponse, CapturingResponse capture, FilterChain chain)
			throws ServletException, IOException {
		try {
			chain.doFilter(wrappedRequest, wrappedResponse);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			abandonTransaction(request);
			IdempotentExecution execution = IdempotentExecution.of(request);
			if (execution != null) {
				capture.discard();
				execution.fail();
			}
			throw ex;
		}
		abandonTransaction(request);
		IdempotentExecution execution = IdempotentExecution.of(request);
		if (wrappedRequest.isAsyncStarted()) {
			if (execution != null && !isAsyncDispatch(request)) {
				wrappedRequest.getAsyncContext().addListener(execution.asyncListener());
			}
			return;
		}
		if (execution != null) {
			end(request, capture, execution);
		}
		capture.flushToClient();
	}

	/**
	 * Ends the execution when its dispatch returns, unless an error page may still write
	 * its response. A request that Spring MVC rejected before the handler began releases
	 * its key at once, whatever the response. After {@code sendError} the container
	 * renders the response in an error dispatch, which is awaited only where the request
	 * listener will hear of the request's end (and release the key if no error page
	 * came); elsewhere (MockMvc, which dispatches no error page and sends no request
	 * events, and after an asynchronous dispatch) the status and headers are stored now,
	 * without the error page's body.
	 */
	private static void end(HttpServletRequest request, CapturingResponse capture, IdempotentExecution execution) {
		if (BeforeHandlerRejections.isRejectedBeforeHandler(request)) {
			execution.rejectedBeforeHandler();
			return;
		}
		// not after an asynchronous dispatch: Tomcat completes and destroys such a
		// request before it renders the error page (and again after), so no event says
		// that no page came, and releasing on the first would let a retry run the
		// handler a second time
		boolean errorPageFollows = capture.isErrorSent() && request.getDispatcherType() != DispatcherType.ASYNC
				&& IdempotencyRequestListener.willHearTheEndOf(request) && execution.awaitErrorPage();
		if (!errorPageFollows) {
			execution.finish(capture);
		}
	}

	/**
	 * Gives a request's reserved body and response bytes back when it ends: at once, or
	 * when an asynchronous request completes.
	 */
	private static final class BudgetRelease implements AsyncListener, Runnable {

		private final @Nullable BufferedBodyRequest request;

		private final @Nullable CapturingResponse response;

		BudgetRelease(@Nullable BufferedBodyRequest request, @Nullable CapturingResponse response) {
			this.request = request;
			this.response = response;
		}

		@Override
		public void run() {
			if (this.request != null) {
				this.request.releaseBudget();
			}
			if (this.response != null) {
				this.response.releaseBudget();
			}
		}

		@Override
		public void onComplete(AsyncEvent event) {
			run();
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			// the bytes are held until the request completes, which follows
		}

		@Override
		public void onError(AsyncEvent event) {
			// the bytes are held until the request completes, which follows
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			event.getAsyncContext().addListener(this);
		}

	}

	/**
	 * A transactional handler's transaction ends in the interceptor, on this thread; if
	 * the request left Spring MVC without that (a filter after this one failed, say), it
	 * is rolled back here, so that it never stays bound to the thread for its next
	 * request. The attribute is looked for first, so that applications without spring-tx
	 * never load the class.
	 */
	private static void abandonTransaction(HttpServletRequest request) {
		if (request.getAttribute(TransactionalExecution.ATTRIBUTE) != null) {
			TransactionalExecution execution = TransactionalExecution.of(request);
			if (execution != null) {
				execution.abandon(new IdempotencyListener() {
				}, NotStoredReason.EXCEPTION);
			}
		}
	}

	/**
	 * After {@code sendError} the container renders the response in an error dispatch:
	 * capture that one instead, if the execution awaits it. If none follows,
	 * {@link IdempotencyRequestListener} releases the key when the request ends.
	 */
	private void filterErrorDispatch(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		IdempotentExecution execution = IdempotentExecution.of(request);
		if (execution == null || !execution.isAwaitingErrorPage()) {
			chain.doFilter(request, response);
			return;
		}
		CapturingResponse capture = new CapturingResponse(response, this.budget);
		capture.startCapture(execution.maxResponseSize());
		try {
			try {
				chain.doFilter(request, capture);
			}
			catch (IOException | ServletException | RuntimeException | Error ex) {
				capture.discard();
				execution.fail();
				throw ex;
			}
			execution.finish(capture);
			capture.flushToClient();
		}
		finally {
			capture.releaseBudget();
		}
	}

}
