package dev.idempo.method;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.core.StorageKeys;
import dev.idempo.method.TransactionalMethodTestApplication.Entry;
import dev.idempo.method.TransactionalMethodTestApplication.Ledger;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@code @Idempotent(key = ..., transactional = true)} on a real database: the method's
 * insert and its record commit together or not at all. A subclass per database.
 *
 * @author idempo
 */
@SpringBootTest(classes = TransactionalMethodTestApplication.class, webEnvironment = WebEnvironment.NONE)
abstract class TransactionalMethodTests {

	static final String HIBERNATE = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration";

	@Autowired
	Ledger ledger;

	@Autowired
	PlatformTransactionManager transactionManager;

	abstract TestDatabase database();

	abstract String table();

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	@Test
	void theInsertAndTheRecordCommitTogetherAndLaterCallsReturnTheStoredResult() {
		String id = newKey();
		Entry first = this.ledger.book(id, 5);
		assertThat(this.ledger.rows(id)).isOne();
		assertThat(records(id)).isOne();
		assertThat(this.ledger.book(id, 5)).isEqualTo(first);
		assertThat(this.ledger.rows(id)).isOne();
	}

	@Test
	void aThrowRollsBackTheInsertAndStoresNothingSoTheRetryRunsAndCommitsOnce() {
		String id = newKey();
		int before = this.ledger.executions();
		this.ledger.failNextAfterInsert();
		assertThatIllegalStateException().isThrownBy(() -> this.ledger.book(id, 7))
			.withMessage("failed after its insert");
		assertThat(this.ledger.rows(id)).isZero();
		assertThat(records(id)).isZero();
		assertThat(this.ledger.book(id, 7)).isEqualTo(new Entry(id, 7));
		assertThat(this.ledger.book(id, 7)).isEqualTo(new Entry(id, 7));
		assertThat(this.ledger.rows(id)).isOne();
		assertThat(this.ledger.executions()).isEqualTo(before + 2);
	}

	@Test
	void aResultThatCannotBeStoredRollsBackTheInsert() {
		String id = newKey();
		assertThatIllegalStateException().isThrownBy(() -> this.ledger.bookUnwritable(id))
			.withMessageContaining("could not be written as JSON");
		assertThat(this.ledger.rows(id)).isZero();
	}

	@Test
	void manyThreadsWithOneKeyInsertOneRow() throws Exception {
		int threads = 8;
		for (int round = 0; round < 3; round++) {
			String id = newKey();
			CountDownLatch start = new CountDownLatch(1);
			ExecutorService executor = Executors.newFixedThreadPool(threads);
			try {
				List<Future<Entry>> results = new ArrayList<>();
				for (int i = 0; i < threads; i++) {
					results.add(executor.submit(() -> {
						start.await();
						try {
							return this.ledger.book(id, 1);
						}
						catch (IdempotencyInProgressException ex) {
							return null;
						}
					}));
				}
				start.countDown();
				for (Future<Entry> result : results) {
					Entry entry = result.get(30, TimeUnit.SECONDS);
					assertThat(entry).isIn(null, new Entry(id, 1));
				}
				assertThat(this.ledger.rows(id)).isOne();
			}
			finally {
				executor.shutdownNow();
			}
		}
	}

	@Test
	void theClaimOutlivesTheTransactionOfTransactionalOnTheSameMethod() {
		String id = newKey();
		this.ledger.boundAtCompletion().set(false);
		this.ledger.insideSpringsTransaction(id);
		assertThat(this.ledger.boundAtCompletion()).isTrue();
		this.ledger.insideSpringsTransaction(id);
		assertThat(this.ledger.rows(id)).isOne();
	}

	@Test
	void insideATransactionAlreadyActiveTheMethodIsRefusedBeforeItRuns() {
		String id = newKey();
		TransactionTemplate surrounding = new TransactionTemplate(this.transactionManager);
		assertThatIllegalStateException()
			.isThrownBy(() -> surrounding.executeWithoutResult((status) -> this.ledger.book(id, 3)))
			.withMessageContaining("idempo must begin the transaction");
		assertThat(this.ledger.rows(id)).isZero();
		assertThat(records(id)).isZero();
		assertThat(this.ledger.book(id, 3).amount()).as("the key was not taken").isEqualTo(3);
	}

	private int records(String id) {
		String scope = "method:" + Ledger.class.getName() + "#book(java.lang.String,int)";
		Integer count = database().jdbc()
			.queryForObject("SELECT COUNT(*) FROM " + table() + " WHERE storage_key = ?", Integer.class,
					StorageKeys.of(scope, id));
		return (count != null) ? count : 0;
	}

}
