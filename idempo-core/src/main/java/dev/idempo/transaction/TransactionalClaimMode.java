package dev.idempo.transaction;

import java.sql.SQLException;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

import dev.idempo.flow.ClaimMode;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.StoreOperation;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;

import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.UnexpectedRollbackException;

/**
 * The transactional mode: a key is claimed in a transaction of the application's
 * ({@link TransactionalClaims#begin}), the work runs in it, and its record is inserted in
 * the same transaction and committed with the work's writes, or everything is rolled
 * back. It never waits for another call, never fails open, and counts its claims and
 * commits as store operations of its store.
 * <p>
 * A hold is bound to the thread that claimed it, which must also end it.
 *
 * @author idempo
 */
public final class TransactionalClaimMode implements ClaimMode<TransactionalClaimMode.TransactionalHold> {

	private final TransactionalClaims claims;

	private final IdempotencyListener listener;

	/**
	 * Creates the transactional mode.
	 * @param claims claims keys in the application's transactions
	 * @param listener counts the claims and commits
	 */
	public TransactionalClaimMode(TransactionalClaims claims, IdempotencyListener listener) {
		this.claims = claims;
		this.listener = listener;
	}

	@Override
	public Claim<TransactionalHold> claim(String storageKey, Duration wait) {
		long start = System.nanoTime();
		TransactionalClaims.Begun begun;
		try {
			begun = this.claims.begin(storageKey);
		}
		catch (LockingStoreException ex) {
			this.listener.onStoreOperation(this.claims.storeName(), StoreOperation.CLAIM, System.nanoTime() - start,
					false);
			throw ex;
		}
		this.listener.onStoreOperation(this.claims.storeName(), StoreOperation.CLAIM, System.nanoTime() - start, true);
		TransactionStatus status = begun.transaction();
		if (status != null) {
			return new Held<>(new TransactionalHold(status, storageKey));
		}
		StoredRecord record = begun.record();
		return (record != null) ? new Replay<>(record) : new InProgress<>();
	}

	@Override
	public boolean isStoreFailure(RuntimeException failure) {
		// anything else (a transaction already active, a transaction manager that binds
		// no connection of the record table) is a misuse, not an outage
		return failure instanceof LockingStoreException;
	}

	@Override
	public boolean failsOpen() {
		// the work's writes would commit without a record
		return false;
	}

	/**
	 * The open transaction that holds a claim.
	 */
	public final class TransactionalHold implements ClaimMode.Hold {

		private final TransactionStatus status;

		private final String key;

		private final Thread thread;

		private long completeStart = System.nanoTime();

		private TransactionalHold(TransactionStatus status, String key) {
			this.status = status;
			this.key = key;
			this.thread = Thread.currentThread();
		}

		@Override
		public boolean commitsWithWork() {
			return true;
		}

		@Override
		public void workEnded() {
			this.completeStart = System.nanoTime();
		}

		@Override
		public boolean isLost() {
			return false;
		}

		@Override
		public boolean lapses() {
			return false;
		}

		@Override
		public boolean complete(StoredRecord record, Duration ttl) {
			TransactionalClaims claims = TransactionalClaimMode.this.claims;
			boolean committing = false;
			try {
				this.status.flush();
				claims.records().insert(claims.connection(), this.key, record, ttl, claims.timeoutSeconds());
				committing = true;
				claims.transactionManager().commit(this.status);
			}
			catch (SQLException | RuntimeException | Error ex) {
				recordFailed(ex);
				throw new NotCommittedException(ex, committing && !(ex instanceof UnexpectedRollbackException));
			}
			TransactionalClaimMode.this.listener.onStoreOperation(claims.storeName(), StoreOperation.COMPLETE,
					System.nanoTime() - this.completeStart, true);
			return true;
		}

		@Override
		public void recordFailed(Throwable failure) {
			// an Error too: the transaction must never stay open on this thread
			TransactionalClaimMode.this.claims.rollbackAfterFailure(this.status, failure);
			TransactionalClaimMode.this.listener.onStoreOperation(TransactionalClaimMode.this.claims.storeName(),
					StoreOperation.COMPLETE, System.nanoTime() - this.completeStart, false);
		}

		@Override
		public boolean release(@Nullable Throwable failure) {
			if (failure != null) {
				TransactionalClaimMode.this.claims.rollbackAfterFailure(this.status, failure);
			}
			else {
				TransactionalClaimMode.this.claims.transactionManager().rollback(this.status);
			}
			return true;
		}

		/**
		 * Whether the transaction has ended, committed or rolled back.
		 * @return whether it has
		 */
		public boolean isEnded() {
			return this.status.isCompleted();
		}

		/**
		 * Whether the current thread is the one that claimed, the only one that can end
		 * the transaction.
		 * @return whether it is
		 */
		public boolean isOwnThread() {
			return Thread.currentThread() == this.thread;
		}

		/**
		 * Flushes the persistence context (JPA), if the transaction is still open.
		 */
		public void flush() {
			if (!this.status.isCompleted()) {
				this.status.flush();
			}
		}

	}

}
