package dev.idempo.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains why the configured idempotency store could not be created.
 *
 * @author idempo
 */
public class IdempotencyFailureAnalyzer extends AbstractFailureAnalyzer<IdempotencyStoreUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, IdempotencyStoreUnavailableException cause) {
		return new FailureAnalysis(
				"idempo could not create its '" + cause.getStoreType().name().toLowerCase(java.util.Locale.ROOT)
						+ "' store (idempo.store.type): " + cause.getMessage(),
				cause.getAction(), cause);
	}

}
