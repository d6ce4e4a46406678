package dev.idempo.autoconfigure.web.servlet;

import dev.idempo.web.IdempotentHandlerException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains an {@link dev.idempo.Idempotent} handler that idempo cannot honour (for
 * example {@code transactional = true} on a store other than postgres or mysql).
 *
 * @author idempo
 */
class IdempotentHandlerFailureAnalyzer extends AbstractFailureAnalyzer<IdempotentHandlerException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, IdempotentHandlerException cause) {
		return new FailureAnalysis(
				"idempo cannot protect the handler " + cause.getHandler() + ": " + cause.getMessage(),
				cause.getAction(), cause);
	}

}
