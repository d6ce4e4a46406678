package dev.idempo.web;

import java.time.Duration;
import java.util.function.Consumer;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.IdempotencySettings;

import org.springframework.util.Assert;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Lets a handler decide, for the response it is producing, how long it is kept or that it
 * is not kept at all, the way the annotation does for every response of the handler.
 * Called on the request thread while the handler runs (not from an asynchronous task). A
 * call outside a protected request (no key, not {@code @Idempotent}) does nothing and
 * answers {@code false}.
 *
 * <pre class="code">
 * &#64;PostMapping("/quotes")
 * &#64;Idempotent
 * Quote quote(&#64;RequestBody QuoteRequest request) {
 *     Quote quote = quotes.create(request);
 *     IdempotentResponse.ttl(Duration.between(Instant.now(), quote.validUntil()));
 *     return quote;
 * }
 * </pre>
 *
 * @author idempo
 */
public final class IdempotentResponse {

	private IdempotentResponse() {
	}

	/**
	 * Keeps the current response for {@code ttl} instead of the handler's TTL.
	 * @param ttl how long it is replayed, positive and at most 100 years
	 * @return whether the current request is protected (and the TTL applied)
	 */
	public static boolean ttl(Duration ttl) {
		Assert.isTrue(ttl != null && IdempotencySettings.isValidTtl(ttl), "'ttl' must be positive and at most 36500d");
		return apply((execution) -> execution.overrideTtl(ttl), (execution) -> execution.overrideTtl(ttl));
	}

	/**
	 * Does not keep the current response: the key is released once the request ends, and
	 * a retry runs the handler again (counted as {@code reason=refused}). For a
	 * transactional handler, whose writes commit, the record answers retries with
	 * {@code 410 response-not-replayable} instead.
	 * @return whether the current request is protected (and storing refused)
	 */
	public static boolean doNotStore() {
		return apply(IdempotentExecution::refuseStoring, TransactionalExecution::refuseStoring);
	}

	private static boolean apply(Consumer<IdempotentExecution> onExecution,
			Consumer<TransactionalExecution> onTransactional) {
		HttpServletRequest request = currentRequest();
		if (request == null) {
			return false;
		}
		IdempotentExecution execution = IdempotentExecution.of(request);
		if (execution != null) {
			onExecution.accept(execution);
			return true;
		}
		// the attribute first: applications without spring-tx never load the class
		if (request.getAttribute(TransactionalExecution.ATTRIBUTE) != null) {
			TransactionalExecution transactional = TransactionalExecution.of(request);
			if (transactional != null) {
				onTransactional.accept(transactional);
				return true;
			}
		}
		return false;
	}

	private static @Nullable HttpServletRequest currentRequest() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet.getRequest() : null;
	}

}
