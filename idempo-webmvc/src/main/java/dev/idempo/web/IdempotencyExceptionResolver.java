package dev.idempo.web;

import java.io.IOException;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers an {@link IdempotencyInProgressException} or
 * {@link IdempotencyKeyReusedException} that escaped a Spring MVC handler (an
 * {@code @Idempotent(key = ...)} method or the {@code IdempotencyTemplate} it called met
 * its key in progress or reused) as the request flow answers its own: {@code 409
 * request-in-progress} with {@code Retry-After}, {@code 422 key-reused}, as
 * {@code application/problem+json}, through the {@link IdempotencyProblemCustomizer}s.
 * The exception is recognised among the causes of what escaped too, as
 * {@code @ExceptionHandler} methods match.
 * <p>
 * Ordered last ({@link Ordered#LOWEST_PRECEDENCE}) among the
 * {@link HandlerExceptionResolver}s, after Spring MVC's own, whose
 * {@code ExceptionHandlerExceptionResolver} calls the application's
 * {@code @ExceptionHandler} methods: one of those that handles the exception (or any
 * supertype of it, in the controller or in any {@code @ControllerAdvice}, whatever its
 * order) wins.
 * <p>
 * The rejection is not counted again: the idempotent method already counted it
 * ({@code conflict} or {@code mismatch}, source {@code method}). For an
 * {@code @Idempotent} handler, the answer is what an exception that escaped it gets: its
 * own key is released, not stored with this answer (counted {@code not_stored},
 * {@code exception}), so that a retry runs the handler again.
 *
 * @author idempo
 */
public class IdempotencyExceptionResolver implements HandlerExceptionResolver, Ordered {

	private static final Log logger = LogFactory.getLog(IdempotencyExceptionResolver.class);

	private final Duration conflictRetryAfter;

	private final List<IdempotencyProblemCustomizer> customizers;

	private int order = Ordered.LOWEST_PRECEDENCE;

	/**
	 * Creates a resolver.
	 * @param conflictRetryAfter the {@code Retry-After} of a key in progress
	 * ({@code idempo.conflict.retry-after})
	 * @param customizers customize the problems, in order
	 */
	public IdempotencyExceptionResolver(Duration conflictRetryAfter, List<IdempotencyProblemCustomizer> customizers) {
		this.conflictRetryAfter = conflictRetryAfter;
		this.customizers = List.copyOf(customizers);
	}

	/**
	 * Writes the problem of a key in progress or reused; leaves any other exception, and
	 * a response already committed, to the resolvers after this one.
	 */
	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		IdempotencyProblem problem = problem(ex);
		if (problem == null || response.isCommitted()) {
			return null;
		}
		IdempotentExecution execution = IdempotentExecution.of(request);
		if (execution != null) {
			execution.exceptionResolved();
		}
		try {
			if (problem == IdempotencyProblem.IN_PROGRESS) {
				ProblemResponses.write(request, response, problem,
						"Another call with the same idempotency key is still running; retry later.",
						this.conflictRetryAfter, this.customizers);
			}
			else {
				ProblemResponses.write(request, response, problem,
						"This idempotency key was already used with other arguments; "
								+ "its stored result belongs to that call.",
						null, this.customizers);
			}
		}
		catch (IOException writeFailed) {
			// the client went away: nothing more to answer it
			logger.debug("Could not write the problem of " + ex, writeFailed);
		}
		return new ModelAndView();
	}

	/**
	 * The problem of {@code thrown} or of its first cause that is a key in progress or
	 * reused, {@code null} if none is.
	 */
	static @Nullable IdempotencyProblem problem(Throwable thrown) {
		Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
		for (Throwable candidate = thrown; candidate != null && seen.add(candidate); candidate = candidate.getCause()) {
			if (candidate instanceof IdempotencyInProgressException) {
				return IdempotencyProblem.IN_PROGRESS;
			}
			if (candidate instanceof IdempotencyKeyReusedException) {
				return IdempotencyProblem.KEY_REUSED;
			}
		}
		return null;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	/**
	 * Sets the order among the {@link HandlerExceptionResolver}s.
	 * @param order the order, by default {@link Ordered#LOWEST_PRECEDENCE}
	 */
	public void setOrder(int order) {
		this.order = order;
	}

}
