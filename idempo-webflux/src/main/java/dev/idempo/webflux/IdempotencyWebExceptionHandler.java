package dev.idempo.webflux;

import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;
import dev.idempo.core.IdempotencyProblemType;
import dev.idempo.core.ProblemCustomizer;
import dev.idempo.core.ProblemJson;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Answers an {@link IdempotencyInProgressException} or
 * {@link IdempotencyKeyReusedException} that escaped a WebFlux handler (an
 * {@code @Idempotent(key = ...)} method or the {@code IdempotencyTemplate} it called met
 * its key in progress or reused) as the request flow answers its own: {@code 409
 * request-in-progress} with {@code Retry-After}, {@code 422 key-reused}, as
 * {@code application/problem+json}, the same bytes as Spring MVC's
 * {@code IdempotencyExceptionResolver}, through the {@link ProblemCustomizer}s. The
 * exception is recognised among the causes of what escaped too, as
 * {@code @ExceptionHandler} methods match.
 * <p>
 * A {@link WebExceptionHandler} sees only what the {@code DispatcherHandler} left
 * unhandled: the application's {@code @ExceptionHandler} methods (in the controller or in
 * any {@code @ControllerAdvice}) run before, and one that handles the exception wins.
 * Ordered {@value #DEFAULT_ORDER}, just before Spring Boot's
 * {@code ErrorWebExceptionHandler} (-1), which would answer 500; an application's own
 * {@code WebExceptionHandler} ordered before this one wins too.
 * <p>
 * The rejection is not counted again: the idempotent method already counted it
 * ({@code conflict} or {@code mismatch}, source {@code method}). For an
 * {@code @Idempotent} handler, the exception passed through idempo's filter before it
 * reached this handler: the handler's own key was released, as for any exception that
 * escapes it.
 *
 * @author idempo
 */
public class IdempotencyWebExceptionHandler implements WebExceptionHandler, Ordered {

	/** The default order: just before Spring Boot's {@code ErrorWebExceptionHandler}. */
	public static final int DEFAULT_ORDER = -2;

	private final Duration conflictRetryAfter;

	private int order = DEFAULT_ORDER;

	private List<ProblemCustomizer> problemCustomizers = List.of();

	/**
	 * Creates a handler.
	 * @param conflictRetryAfter the {@code Retry-After} of a key in progress
	 * ({@code idempo.conflict.retry-after})
	 */
	public IdempotencyWebExceptionHandler(Duration conflictRetryAfter) {
		this.conflictRetryAfter = conflictRetryAfter;
	}

	/**
	 * Writes the problem of a key in progress or reused; passes any other exception, and
	 * one whose response is already committed, on to the handlers after this one.
	 */
	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		IdempotencyProblemType problem = problem(ex);
		ServerHttpResponse response = exchange.getResponse();
		if (problem == null || response.isCommitted()) {
			return Mono.error(ex);
		}
		response.setStatusCode(HttpStatusCode.valueOf(problem.status()));
		HttpHeaders headers = response.getHeaders();
		String detail;
		if (problem == IdempotencyProblemType.IN_PROGRESS) {
			headers.set(HttpHeaders.RETRY_AFTER, Long.toString(ProblemJson.seconds(this.conflictRetryAfter)));
			detail = "Another call with the same idempotency key is still running; retry later.";
		}
		else {
			headers.remove(HttpHeaders.RETRY_AFTER);
			detail = "This idempotency key was already used with other arguments; "
					+ "its stored result belongs to that call.";
		}
		headers.set(HttpHeaders.CONTENT_TYPE, ProblemJson.MEDIA_TYPE);
		byte[] body = ProblemJson.render(problem, detail, new ExchangeProtectedRequest(exchange),
				this.problemCustomizers);
		headers.setContentLength(body.length);
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
	}

	/**
	 * The problem of {@code thrown} or of its first cause that is a key in progress or
	 * reused, {@code null} if none is.
	 */
	static @Nullable IdempotencyProblemType problem(Throwable thrown) {
		Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
		for (Throwable candidate = thrown; candidate != null && seen.add(candidate); candidate = candidate.getCause()) {
			if (candidate instanceof IdempotencyInProgressException) {
				return IdempotencyProblemType.IN_PROGRESS;
			}
			if (candidate instanceof IdempotencyKeyReusedException) {
				return IdempotencyProblemType.KEY_REUSED;
			}
		}
		return null;
	}

	/**
	 * Customizes the problems this handler writes, as the request flow's.
	 * @param problemCustomizers the customizers, in order
	 */
	public void setProblemCustomizers(List<ProblemCustomizer> problemCustomizers) {
		this.problemCustomizers = List.copyOf(problemCustomizers);
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	/**
	 * Sets the order among the {@link WebExceptionHandler}s.
	 * @param order the order, by default {@value #DEFAULT_ORDER}
	 */
	public void setOrder(int order) {
		this.order = order;
	}

}
