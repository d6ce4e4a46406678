package dev.idempo.store.jdbc;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStore;
import dev.idempo.store.OffloadedLockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.ReactiveLockingStoreContractTest;
import dev.idempo.store.StoredRecord;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive store contract for a JDBC store served through
 * {@link OffloadedLockingStore}, on a real server: its blocking calls run on
 * {@code boundedElastic}, never on the subscriber's non-blocking thread, and a claim
 * cancelled while it runs gives back the lock it took. The server, the table and how a
 * lock session is killed come from the blocking store's tests of the same server.
 *
 * @author idempo
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OffloadedJdbcLockingStoreTests extends ReactiveLockingStoreContractTest {

	private final JdbcLockingStoreTests server = serverTests();

	private String table;

	/**
	 * The blocking store's tests of the server under test, for their server, data source,
	 * store and session killer.
	 * @return the tests
	 */
	abstract JdbcLockingStoreTests serverTests();

	@BeforeAll
	void createTable() {
		this.table = this.server.database().createTable(this.server.platform());
	}

	@AfterAll
	void dropTable() {
		if (this.table != null) {
			this.server.database().dropTable(this.table);
		}
	}

	private JdbcLockingStore newStore() {
		JdbcStoreSettings settings = JdbcStoreSettings.defaults()
			.withTableName(this.table)
			.withSessionCheckInterval(Duration.ofMillis(200));
		return this.server.newStore(this.server.dataSource(this.server.database()), settings);
	}

	@Override
	protected LockingStore createBlockingStore() {
		return newStore();
	}

	@Override
	protected ReactiveLockingStore createReactiveStore(LockingStore blockingStore) {
		return new OffloadedLockingStore(blockingStore);
	}

	@Override
	protected void destroyBlockingStore(LockingStore store) {
		((JdbcLockingStore) store).close();
	}

	@Override
	protected void breakLease(Lease lease) {
		this.server.killSessionHolding((JdbcLockingStore) blockingStore(), lease);
	}

	/**
	 * The store under test behind a store whose claims, once they have taken effect in
	 * the database, wait for a latch before they answer (on {@code boundedElastic}, where
	 * waiting is allowed).
	 */
	@Override
	protected HeldAnswers holdAnswers() {
		CountDownLatch answers = new CountDownLatch(1);
		LockingStore held = new HeldClaims(blockingStore(), answers);
		ReactiveLockingStore store = new OffloadedLockingStore(held);
		return new HeldAnswers() {

			@Override
			public ReactiveLockingStore store() {
				return store;
			}

			@Override
			public void letThrough() {
				answers.countDown();
			}

			@Override
			public void close() {
				answers.countDown();
			}

		};
	}

	/**
	 * A store whose claims answer only once a latch opens.
	 */
	private record HeldClaims(LockingStore delegate, CountDownLatch answers) implements LockingStore {

		@Override
		public ClaimResult claim(String key, Duration lockTtl) {
			ClaimResult result = this.delegate.claim(key, lockTtl);
			try {
				assertThat(this.answers.await(30, TimeUnit.SECONDS)).as("answers let through").isTrue();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return result;
		}

		@Override
		public boolean complete(Lease lease, StoredRecord record, Duration ttl) {
			return this.delegate.complete(lease, record, ttl);
		}

		@Override
		public boolean release(Lease lease) {
			return this.delegate.release(lease);
		}

	}

}
