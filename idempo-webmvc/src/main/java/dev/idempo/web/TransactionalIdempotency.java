package dev.idempo.web;

import java.sql.Connection;
import java.time.Duration;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.StoredRecord;
import dev.idempo.store.TransactionalStore;
import dev.idempo.transaction.TransactionalClaims;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;

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

	TransactionalStore records() {
		return this.claims.records();
	}

	int timeoutSeconds() {
		return this.claims.timeoutSeconds();
	}

	Connection connection() {
		return this.claims.connection();
	}

	void rollbackAfterFailure(TransactionStatus status, Throwable failure) {
		this.claims.rollbackAfterFailure(status, failure);
	}

	/**
	 * Begins the transaction and claims {@code key} in it, without waiting for another
	 * request. Unless the claim runs the handler, the transaction is rolled back before
	 * this returns.
	 * @param key the storage key
	 * @param fingerprint the request's fingerprint
	 * @param ttl the record's time to live
	 * @return the outcome
	 */
	Begun begin(String key, String fingerprint, Duration ttl) {
		TransactionalClaims.Begun begun = this.claims.begin(key);
		TransactionStatus transaction = begun.transaction();
		if (transaction != null) {
			return new Begun(null, new TransactionalExecution(this, transaction, key, fingerprint, ttl));
		}
		return (begun.record() != null) ? new Begun(begun.record(), null) : Begun.BUSY;
	}

	/**
	 * The outcome of {@link #begin}: the record to replay, the execution that runs the
	 * handler, or neither (another request holds the key).
	 *
	 * @param record the completed record, if any
	 * @param execution the execution, if the key was claimed
	 */
	record Begun(@Nullable StoredRecord record, @Nullable TransactionalExecution execution) {

		static final Begun BUSY = new Begun(null, null);

	}

}
