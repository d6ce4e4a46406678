package dev.idempo.webflux.testapp;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.idempo.web.HandlerExecutions;

/**
 * Counts handler executions per endpoint and lets tests hold a reactive handler without
 * blocking a thread: a held handler waits for a signal, not on a latch.
 *
 * @author idempo
 */
public class ReactiveExecutions implements HandlerExecutions {

	private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

	private volatile CountDownLatch entered = new CountDownLatch(1);

	private volatile Sinks.Empty<Void> release = released();

	public int increment(String endpoint) {
		return this.counts.computeIfAbsent(endpoint, (key) -> new AtomicInteger()).incrementAndGet();
	}

	@Override
	public int count(String endpoint) {
		AtomicInteger count = this.counts.get(endpoint);
		return (count != null) ? count.get() : 0;
	}

	@Override
	public void holdHandlers() {
		this.entered = new CountDownLatch(1);
		this.release = Sinks.empty();
	}

	@Override
	public void releaseHandlers() {
		this.release.tryEmitEmpty();
	}

	@Override
	public boolean awaitEntered() throws InterruptedException {
		return this.entered.await(30, TimeUnit.SECONDS);
	}

	/**
	 * Completes when the handlers are released; tells {@link #awaitEntered()} when
	 * subscribed.
	 * @return the signal
	 */
	Mono<Void> hold() {
		return Mono.defer(() -> {
			Sinks.Empty<Void> release = this.release;
			this.entered.countDown();
			return release.asMono();
		});
	}

	private static Sinks.Empty<Void> released() {
		Sinks.Empty<Void> sink = Sinks.empty();
		sink.tryEmitEmpty();
		return sink;
	}

}
