package dev.idempo.web;

import java.time.Duration;
import java.util.function.Supplier;

import javax.sql.DataSource;

import jakarta.servlet.http.HttpServletRequest;

import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.store.TransactionalStore;
import dev.idempo.transaction.TransactionalClaimMode;
import dev.idempo.transaction.TransactionalClaimMode.TransactionalHold;
import dev.idempo.transaction.TransactionalClaims;

import org.springframework.transaction.PlatformTransactionManager;

/**
 * Transactional mode for handlers ({@code @Idempotent(transactional = true)}): claims the
 * key in a transaction of the application's {@link PlatformTransactionManager}
 * ({@link TransactionalClaims}, shared with idempotent methods) and lets the handler run
 * in it; the response record is inserted in the same transaction and committed with the
 * handler's writes ({@link TransactionalExecution}).
 * <p>
 * The transaction is bound to the request thread: it begins in the interceptor's
 * {@code preHandle} and ends in its {@code afterCompletion}, both on that thread, before
 * the filter lets the held-back response go to the client.
 *
 * @author idempo
 */
public class TransactionalIdempotency {

	private final TransactionalClaims claims;

	/**
	 * Creates the transactional mode of handlers.
	 * @param claims claims keys in the application's transactions
	 */
	public TransactionalIdempotency(TransactionalClaims claims) {
		this.claims = claims;
	}

	/**
	 * Creates the transactional mode of a store.
	 * @param transactionManager the application's transaction manager; it must manage
	 * {@code dataSource}
	 * @param dataSource where the record table lives, the application's own by default
	 * @param records the statements of the store's database
	 * @param timeout the timeout of idempo's own statements
	 */
	public TransactionalIdempotency(PlatformTransactionManager transactionManager, DataSource dataSource,
			TransactionalStore records, Duration timeout) {
		this(new TransactionalClaims(transactionManager, dataSource, records, timeout));
	}

	/**
	 * Creates the transactional mode of a store, with a transaction manager looked up
	 * when first needed.
	 * @param transactionManager supplies the application's transaction manager; it must
	 * manage {@code dataSource}
	 * @param dataSource where the record table lives, the application's own by default
	 * @param records the statements of the store's database
	 * @param timeout the timeout of idempo's own statements
	 */
	public TransactionalIdempotency(Supplier<PlatformTransactionManager> transactionManager, DataSource dataSource,
			TransactionalStore records, Duration timeout) {
		this(new TransactionalClaims(transactionManager, dataSource, records, timeout));
	}

	/**
	 * The claims this mode runs on.
	 * @return the claims
	 */
	public TransactionalClaims claims() {
		return this.claims;
	}

	/**
	 * The store's name, for metrics.
	 * @return the name
	 */
	public String storeName() {
		return this.claims.storeName();
	}

	/**
	 * The transaction manager, looked up on first use.
	 * @return the transaction manager
	 */
	public PlatformTransactionManager transactionManager() {
		return this.claims.transactionManager();
	}

	/**
	 * The data source of the record table, which the transaction manager must manage.
	 * @return the data source
	 */
	public DataSource dataSource() {
		return this.claims.dataSource();
	}

	/**
	 * Transactional mode for the interceptor: claims without waiting, holds the response
	 * back until the commit, and never fails open.
	 * @param listener counts the claims and commits
	 * @return the mode
	 */
	HandlerMode<TransactionalHold> handlerMode(IdempotencyListener listener) {
		return new HandlerMode<>(
				new TransactionalClaimMode(this.claims, listener), Duration.ZERO, (request, capture, hold, fingerprint,
						policy) -> start(request, capture, hold, fingerprint, policy, listener),
				"Idempotency store failed; refusing the transactional request (always fail-closed)");
	}

	private static void start(HttpServletRequest request, CapturingResponse capture, TransactionalHold hold,
			PendingFingerprint fingerprint, IdempotentHandlers.Policy policy, IdempotencyListener listener) {
		// transactional bodies are held whole: the fingerprint is known before the
		// handler
		if (fingerprint.consumesBody()) {
			throw new IllegalStateException("A transactional request's fingerprint must be known before its handler");
		}
		TransactionalExecution execution = new TransactionalExecution(hold, fingerprint.get(), policy.ttl(),
				policy.responses());
		request.setAttribute(TransactionalExecution.ATTRIBUTE, execution);
		// held back whatever its size, redirects too: nothing may reach the client
		// before the commit
		capture.startHolding();
		if (capture.isCaptureFailed()) {
			execution.abandon(listener, NotStoredReason.NOT_CAPTURED);
			throw new IllegalStateException("The response of a transactional @Idempotent handler was written "
					+ "or committed before the handler ran, so it could not be held back until the commit; "
					+ "its transaction was rolled back and the handler not run");
		}
	}

}
