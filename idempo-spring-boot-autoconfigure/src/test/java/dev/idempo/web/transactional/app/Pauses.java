package dev.idempo.web.transactional.app;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.springframework.util.Assert;

/**
 * Where a test holds a handler: the handler says it arrived ({@link #arrive}) and waits
 * until the test lets it go ({@link #release}); the test waits for the arrival with
 * {@link #awaitArrival}. Also remembers the database session of the held transaction.
 */
public class Pauses {

	private volatile CountDownLatch arrived = new CountDownLatch(1);

	private volatile CountDownLatch released = new CountDownLatch(1);

	private volatile long sessionId;

	/** Arms a new pause. */
	public void reset() {
		this.arrived = new CountDownLatch(1);
		this.released = new CountDownLatch(1);
		this.sessionId = 0;
	}

	void arrive(long sessionId) {
		this.sessionId = sessionId;
		this.arrived.countDown();
		try {
			Assert.state(this.released.await(30, TimeUnit.SECONDS), "The test never released the pause");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Waits until a handler has arrived at the pause.
	 * @return the database session id of its transaction
	 * @throws InterruptedException if interrupted
	 */
	public long awaitArrival() throws InterruptedException {
		Assert.state(this.arrived.await(30, TimeUnit.SECONDS), "No handler arrived at the pause");
		return this.sessionId;
	}

	/** Lets the held handler go on. */
	public void release() {
		this.released.countDown();
	}

}
