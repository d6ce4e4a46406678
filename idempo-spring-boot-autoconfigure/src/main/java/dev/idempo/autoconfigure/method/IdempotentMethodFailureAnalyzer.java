package dev.idempo.autoconfigure.method;

import dev.idempo.method.IdempotentMethodException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains an {@link dev.idempo.Idempotent} method that idempo cannot honour (no key
 * outside the web layer, a key on a web handler, a key expression that does not parse).
 *
 * @author idempo
 */
class IdempotentMethodFailureAnalyzer extends AbstractFailureAnalyzer<IdempotentMethodException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, IdempotentMethodException cause) {
		return new FailureAnalysis("idempo cannot protect " + cause.getMethod() + ": " + cause.getMessage(),
				cause.getAction(), cause);
	}

}
