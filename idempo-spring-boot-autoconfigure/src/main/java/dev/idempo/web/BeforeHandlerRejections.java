package dev.idempo.web;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.validation.BindException;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.bind.ServletRequestBindingException;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.method.annotation.MethodArgumentConversionNotSupportedException;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.multipart.support.MissingServletRequestPartException;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.util.WebUtils;

/**
 * Tells whether Spring MVC answered a request before its handler method began: an
 * exception it raises while it resolves the handler's arguments (or validates them) was
 * turned into the response. Such a request did nothing, so its response is not stored and
 * its key is released: the corrected retry with the same key runs the handler.
 * <p>
 * Spring MVC has no callback between resolving the arguments and invoking the method, so
 * the exception type decides; the types below are the ones Spring MVC raises only while
 * resolving or validating arguments. A handler that throws one of them itself is taken
 * for a rejection too. A {@code ConstraintViolationException} of a {@code @Validated}
 * controller proxy is not among them: the same exception comes from services the handler
 * called after its effects. An exception that no resolver turned into a response
 * propagates and releases the key anyway.
 *
 * @author idempo
 */
final class BeforeHandlerRejections {

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
		return isArgumentFailure(request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE))
				|| isArgumentFailure(request.getAttribute(WebUtils.ERROR_EXCEPTION_ATTRIBUTE));
	}

	static boolean isArgumentFailure(@Nullable Object exception) {
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

}
