package dev.idempo.web;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.validation.BindException;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.bind.ServletRequestBindingException;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.method.annotation.MethodArgumentConversionNotSupportedException;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.method.support.InvocableHandlerMethod;
import org.springframework.web.multipart.support.MissingServletRequestPartException;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.function.support.HandlerFunctionAdapter;
import org.springframework.web.util.WebUtils;

/**
 * Tells whether Spring MVC answered a request before its handler method began: an
 * exception it raises while it resolves the handler's arguments (or validates them) was
 * turned into the response. Such a request did nothing, so its response is not stored and
 * its key is released: the corrected retry with the same key runs the handler.
 * <p>
 * Spring MVC has no callback between resolving the arguments and invoking the method, so
 * the exception type decides, together with where the exception was raised: the types
 * below are the ones Spring MVC raises while resolving or validating arguments, and such
 * an exception counts only if it was raised outside the invocation of a handler method
 * (no {@code InvocableHandlerMethod.doInvoke} frame in its stack trace) and not in an
 * asynchronous dispatch (which only follows a handler that ran). A handler, or its
 * {@code Callable}, that throws one of them itself has run and may have had its effects:
 * its answer is stored like that of any handler, since releasing its key would let a
 * retry run it a second time. A {@code ConstraintViolationException} of a
 * {@code @Validated} controller proxy is not among the types: the same exception comes
 * from services the handler called after its effects. An exception that no resolver
 * turned into a response propagates and releases the key anyway.
 * <p>
 * A functional endpoint ({@code HandlerFunction}) reads its arguments itself: one of
 * these exceptions raised while it read the request through Spring MVC's
 * {@code ServerRequest} ({@code body(...)}, {@code bind(...)}: an unreadable body, an
 * unsupported media type, a binding failure) counts as a rejection before the handler;
 * one the function raised itself does not.
 *
 * @author idempo
 */
final class BeforeHandlerRejections {

	private static final String INVOCABLE_HANDLER_METHOD = InvocableHandlerMethod.class.getName();

	private static final String INVOKE = "doInvoke";

	private static final String HANDLER_FUNCTION_ADAPTER = HandlerFunctionAdapter.class.getName();

	private static final String HANDLE = "handle";

	/** Spring MVC's {@code ServerRequest}, nested classes included. */
	private static final String SERVER_REQUEST = "org.springframework.web.servlet.function.DefaultServerRequest";

	private BeforeHandlerRejections() {
	}

	/**
	 * Whether the response of {@code request} was produced before its handler method
	 * began. Read after the dispatch: Spring MVC exposes the exception it resolved as a
	 * request attribute.
	 * @param request the request
	 * @return whether the request was rejected before its handler ran
	 */
	static boolean isRejectedBeforeHandler(HttpServletRequest request) {
		if (request.getDispatcherType() == DispatcherType.ASYNC) {
			// the handler returned an asynchronous result: it ran
			return false;
		}
		return isArgumentFailure(request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE))
				|| isArgumentFailure(request.getAttribute(WebUtils.ERROR_EXCEPTION_ATTRIBUTE));
	}

	static boolean isArgumentFailure(@Nullable Object exception) {
		if (!(exception instanceof Throwable throwable) || isRaisedByAHandlerMethod(throwable)) {
			return false;
		}
		if (exception instanceof HandlerMethodValidationException validation) {
			// also raised for the return value, after the method ran
			return !validation.isForReturnValue();
		}
		return exception instanceof HttpMessageNotReadableException
				|| exception instanceof HttpMediaTypeNotSupportedException || exception instanceof BindException
				|| exception instanceof ServletRequestBindingException
				|| exception instanceof MethodArgumentTypeMismatchException
				|| exception instanceof MethodArgumentConversionNotSupportedException
				|| exception instanceof MissingServletRequestPartException;
	}

	/**
	 * Whether {@code exception} was raised while a handler method ran: Spring MVC raises
	 * its argument exceptions before it invokes the method.
	 */
	private static boolean isRaisedByAHandlerMethod(Throwable exception) {
		StackTraceElement[] frames = exception.getStackTrace();
		if (frames.length == 0) {
			// no trace to tell where it came from (an exception made without one): assume
			// the handler ran, since releasing its key could run it twice
			return true;
		}
		boolean readingTheRequest = false;
		for (StackTraceElement frame : frames) {
			String type = frame.getClassName();
			if (INVOKE.equals(frame.getMethodName()) && INVOCABLE_HANDLER_METHOD.equals(type)) {
				return true;
			}
			readingTheRequest |= type.startsWith(SERVER_REQUEST);
			if (HANDLE.equals(frame.getMethodName()) && HANDLER_FUNCTION_ADAPTER.equals(type)) {
				// a functional endpoint: raised by the handler function itself, unless
				// Spring raised it while the function read the request (its arguments)
				return !readingTheRequest;
			}
		}
		return false;
	}

}
