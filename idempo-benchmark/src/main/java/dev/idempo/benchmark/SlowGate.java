package dev.idempo.benchmark;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Where {@code POST /slow-idem} waits until the script releases it, at most
 * {@code bench.slow-timeout}.
 *
 * @author idempo
 */
@Component
class SlowGate {

	private final AtomicReference<CountDownLatch> latch = new AtomicReference<>(new CountDownLatch(1));

	private final AtomicLong entered = new AtomicLong();

	private final AtomicLong left = new AtomicLong();

	private final Duration timeout;

	SlowGate(@Value("${bench.slow-timeout:120s}") Duration timeout) {
		this.timeout = timeout;
	}

	void pass() throws InterruptedException {
		CountDownLatch current = this.latch.get();
		this.entered.incrementAndGet();
		try {
			current.await(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		finally {
			this.left.incrementAndGet();
		}
	}

	/**
	 * Lets every waiting request through; later requests wait again.
	 */
	void release() {
		this.latch.getAndSet(new CountDownLatch(1)).countDown();
	}

	long entered() {
		return this.entered.get();
	}

	long left() {
		return this.left.get();
	}

}
