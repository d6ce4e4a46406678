package dev.idempo.autoconfigure.web.reactive;

import dev.idempo.webflux.IdempotentWebFluxHandlerException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains an {@link dev.idempo.Idempotent} WebFlux handler that idempo cannot honour
 * ({@code transactional = true}, a TTL that is not a valid duration), as
 * {@code IdempotentHandlerFailureAnalyzer} explains a Spring MVC one: Boot's failure
 * report instead of the stack trace of "Application run failed".
 *
 * @author idempo
 */
class IdempotentWebFluxHandlerFailureAnalyzer extends AbstractFailureAnalyzer<IdempotentWebFluxHandlerException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, IdempotentWebFluxHandlerException cause) {
		return new FailureAnalysis(
				"idempo cannot protect the WebFlux handler " + cause.getHandler() + ": " + cause.getMessage(),
				cause.getAction(), cause);
	}

}
