package dev.idempo.kafka;

import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.testsupport.ApplicationProcess;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.Assert;

/**
 * The effect of a payment message: one row in the business table, written in the
 * listener's transaction, with the name of the instance that wrote it. Two hooks let the
 * tests reach the points they prove, each announced through a file in
 * {@code payments.signal-dir} so that the test waits for a file, never for a time:
 * <ul>
 * <li>{@code payments.fail-once}: the first execution of that message in this instance
 * throws after its insert, so the listener's transaction rolls the row back and the
 * container redelivers the message (file {@code failed-<id>});</li>
 * <li>{@code payments.pause-after-commit}: once that message's transaction has committed,
 * in {@link TransactionSynchronization#afterCommit()}, before the listener returns and so
 * before the container can commit its offset, the thread stops for good (file
 * {@code committed-<id>}): the test then kills the JVM.</li>
 * </ul>
 */
@Service
public class Payments {

	private final JdbcTemplate jdbc;

	private final String insert;

	private final String instance;

	private final Path signals;

	private final String failOnce;

	private final String pauseAfterCommit;

	private final Set<String> failed = ConcurrentHashMap.newKeySet();

	private final AtomicInteger executions = new AtomicInteger();

	Payments(JdbcTemplate jdbc, @Value("${payments.table}") String table,
			@Value("${" + ApplicationProcess.INSTANCE_PROPERTY + "}") String instance,
			@Value("${payments.signal-dir}") Path signals, @Value("${payments.fail-once:}") String failOnce,
			@Value("${payments.pause-after-commit:}") String pauseAfterCommit) {
		Assert.isTrue(table.matches("[A-Za-z0-9_]+"), "bad table name");
		this.jdbc = jdbc;
		this.insert = "INSERT INTO " + table + " (payment_id, payload, instance) VALUES (?, ?, ?)";
		this.instance = instance;
		this.signals = signals;
		this.failOnce = failOnce;
		this.pauseAfterCommit = pauseAfterCommit;
	}

	/**
	 * Records a payment; must run in the caller's transaction.
	 * @param paymentId the payment's id
	 * @param payload the message
	 */
	public void insert(String paymentId, String payload) {
		Assert.state(TransactionSynchronizationManager.isActualTransactionActive(),
				"the listener must run in a transaction");
		this.executions.incrementAndGet();
		this.jdbc.update(this.insert, paymentId, payload, this.instance);
		if (paymentId.equals(this.failOnce) && this.failed.add(paymentId)) {
			ApplicationProcess.writeAtomically(this.signals.resolve("failed-" + paymentId), this.instance);
			throw new IllegalStateException("Failing the first delivery of " + paymentId + " on purpose");
		}
		if (paymentId.equals(this.pauseAfterCommit)) {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					pauseForever(paymentId);
				}

			});
		}
	}

	/**
	 * How many times this instance ran {@link #insert}, failed runs included.
	 * @return the count
	 */
	public int executions() {
		return this.executions.get();
	}

	private void pauseForever(String paymentId) {
		ApplicationProcess.writeAtomically(this.signals.resolve("committed-" + paymentId), this.instance);
		System.out.println("committed " + paymentId + ", pausing before the listener returns");
		try {
			new CountDownLatch(1).await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while paused after " + paymentId, ex);
		}
	}

}
