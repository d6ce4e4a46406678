package dev.idempo.web.testapp;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.web.HandlerExecutions;

/**
 * Counts handler executions per endpoint and lets tests hold a handler inside its body.
 *
 * @author idempo
 */
public class Executions implements HandlerExecutions {

	private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

	private volatile CountDownLatch entered = new CountDownLatch(1);

	private volatile CountDownLatch release = new CountDownLatch(0);

	public int increment(String endpoint) {
		return this.counts.computeIfAbsent(endpoint, (key) -> new AtomicInteger()).incrementAndGet();
	}

	@Override
	public int count(String endpoint) {
		AtomicInteger count = this.counts.get(endpoint);
		return (count != null) ? count.get() : 0;
	}

	/** Makes the next blocking handlers wait until {@link #releaseHandlers()}. */
	@Override
	public void holdHandlers() {
		this.entered = new CountDownLatch(1);
		this.release = new CountDownLatch(1);
	}

	@Override
	public void releaseHandlers() {
		this.release.countDown();
	}

	@Override
	public boolean awaitEntered() throws InterruptedException {
		return this.entered.await(30, TimeUnit.SECONDS);
	}

	void block() {
		this.entered.countDown();
		try {
			if (!this.release.await(60, TimeUnit.SECONDS)) {
				throw new IllegalStateException("handler was never released");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
