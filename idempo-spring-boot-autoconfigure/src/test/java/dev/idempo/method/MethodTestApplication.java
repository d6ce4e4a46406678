package dev.idempo.method;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.idempo.Idempotent;
import dev.idempo.core.CurrentIdempotentCall;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Service;

/**
 * A non-web application with idempotent service methods that count their executions.
 *
 * @author idempo
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class MethodTestApplication {

	@Bean
	SimpleMeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

	@Bean
	Payments payments(Executions executions) {
		return new Payments(executions);
	}

	@Bean
	Executions executions() {
		return new Executions();
	}

	@Bean
	KeyPrefix keyPrefix() {
		return new KeyPrefix("tenant-7");
	}

	record Order(String id, BigDecimal amount) {
	}

	record Receipt(String orderId, BigDecimal amount, int run) {
	}

	record KeyPrefix(String value) {
	}

	/** Counts executions per name and key, and can hold a method until released. */
	static class Executions {

		private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

		private volatile CountDownLatch entered = new CountDownLatch(0);

		private volatile CountDownLatch release = new CountDownLatch(0);

		int record(String name, String key) {
			return this.counts.computeIfAbsent(name + "/" + key, (k) -> new AtomicInteger()).incrementAndGet();
		}

		int count(String name, String key) {
			AtomicInteger count = this.counts.get(name + "/" + key);
			return (count != null) ? count.get() : 0;
		}

		void hold() {
			this.entered = new CountDownLatch(1);
			this.release = new CountDownLatch(1);
		}

		boolean awaitEntered() throws InterruptedException {
			return this.entered.await(10, TimeUnit.SECONDS);
		}

		void release() {
			this.release.countDown();
		}

		void pause() {
			this.entered.countDown();
			try {
				if (!this.release.await(20, TimeUnit.SECONDS)) {
					throw new IllegalStateException("never released");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	@Service
	static class Payments {

		private final Executions executions;

		Payments(Executions executions) {
			this.executions = executions;
		}

		@Idempotent(key = "#order.id()")
		public Receipt charge(Order order) {
			int run = this.executions.record("charge", order.id());
			return new Receipt(order.id(), order.amount(), run);
		}

		@Idempotent(key = "#record.key()")
		public int consume(org.apache.kafka.clients.consumer.ConsumerRecord<String, String> record) {
			return this.executions.record("consume", record.key());
		}

		@Idempotent(key = "#message.headers['orderId']")
		public int receive(org.springframework.messaging.Message<String> message) {
			return this.executions.record("receive", String.valueOf(message.getHeaders().get("orderId")));
		}

		@Idempotent(key = "#p0")
		public List<Receipt> chargeAll(String batch, List<Order> orders) {
			int run = this.executions.record("chargeAll", batch);
			return orders.stream().map((order) -> new Receipt(order.id(), order.amount(), run)).toList();
		}

		@Idempotent(key = "#id")
		public @Nullable Receipt nothing(String id) {
			this.executions.record("nothing", id);
			return null;
		}

		@Idempotent(key = "#id")
		public void touch(String id) {
			this.executions.record("touch", id);
		}

		@Idempotent(key = "#id")
		public int count(String id) {
			return this.executions.record("count", id);
		}

		@Idempotent(key = "#id")
		public Receipt failTwice(String id) throws java.io.IOException {
			int run = this.executions.record("failTwice", id);
			if (run <= 2) {
				throw new java.io.IOException("failure " + run);
			}
			return new Receipt(id, BigDecimal.ONE, run);
		}

		@Idempotent(key = "#id")
		public Receipt slow(String id) {
			int run = this.executions.record("slow", id);
			this.executions.pause();
			return new Receipt(id, BigDecimal.TEN, run);
		}

		@Idempotent(key = "#id", cacheResponse = false)
		public int lockOnly(String id) {
			int run = this.executions.record("lockOnly", id);
			this.executions.pause();
			return run;
		}

		@Idempotent(key = "#a0 + ':' + #root.args[1]")
		public int positional(String first, int second) {
			return this.executions.record("positional", first + ":" + second);
		}

		@Idempotent(key = "#root.method.name + ':' + #id")
		public int byMethodName(String id) {
			return this.executions.record("byMethodName", id);
		}

		@Idempotent(key = "@keyPrefix.value() + ':' + #id")
		public int withBean(String id) {
			return this.executions.record("withBean", id);
		}

		@Idempotent(key = "#id")
		public int optionalKey(@Nullable String id) {
			return this.executions.record("optionalKey", String.valueOf(id));
		}

		@Idempotent(key = "#id", required = true)
		public int requiredKey(@Nullable String id) {
			return this.executions.record("requiredKey", String.valueOf(id));
		}

		@Idempotent(key = "#order.missing()")
		public int brokenKey(Order order) {
			return this.executions.record("brokenKey", order.id());
		}

		@Idempotent(key = "#id", ttl = "1s")
		public int shortLived(String id) {
			return this.executions.record("shortLived", id);
		}

		@Idempotent(key = "#id")
		public int interruptsItself(String id) {
			int run = this.executions.record("interruptsItself", id);
			// as a method does that caught InterruptedException and finished its work
			Thread.currentThread().interrupt();
			return run;
		}

		@Idempotent(key = "#id")
		public int interruptedAndFails(String id) {
			int run = this.executions.record("interruptedAndFails", id);
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted in run " + run);
		}

		public int callsItself(String id) {
			// a call through 'this', not through the proxy: not intercepted
			return count(id);
		}

	}

	/**
	 * Methods whose results arrive later. Their work runs on boundedElastic, where a test
	 * may hold it: a Mono's subscriber thread must never block.
	 */
	@Service
	static class ReactivePayments {

		private final Executions executions;

		ReactivePayments(Executions executions) {
			this.executions = executions;
		}

		@Idempotent(key = "#order.id()")
		public Mono<Receipt> charge(Order order) {
			return Mono.fromCallable(() -> {
				int run = this.executions.record("mono-charge", order.id());
				return new Receipt(order.id(), order.amount(), run);
			});
		}

		@Idempotent(key = "#id")
		public Mono<Receipt> slow(String id) {
			return Mono.fromCallable(() -> {
				int run = this.executions.record("mono-slow", id);
				this.executions.pause();
				return new Receipt(id, BigDecimal.ONE, run);
			}).subscribeOn(Schedulers.boundedElastic());
		}

		@Idempotent(key = "#id")
		public Mono<Receipt> failOnce(String id) {
			return Mono.defer(() -> (this.executions.record("mono-fail-once", id) == 1)
					? Mono.error(new IllegalStateException("first run fails"))
					: Mono.just(new Receipt(id, BigDecimal.TEN, 2)));
		}

		@Idempotent(key = "#id")
		public Mono<Void> nothing(String id) {
			return Mono.fromRunnable(() -> this.executions.record("mono-nothing", id));
		}

		@Idempotent(key = "#id")
		public Mono<String> identity(String id) {
			return Mono.deferContextual((context) -> {
				this.executions.record("mono-identity", id);
				CurrentIdempotentCall call = context.getOrDefault(CurrentIdempotentCall.CONTEXT_KEY, null);
				return Mono.justOrEmpty((call != null) ? call.identity() : null);
			});
		}

		@Idempotent(key = "#id")
		public Mono<IdempotentMethodContractTests.Unwritable> unwritable(String id) {
			return Mono.fromCallable(
					() -> new IdempotentMethodContractTests.Unwritable(this.executions.record("mono-unwritable", id)));
		}

		@Idempotent(key = "#order.id()")
		public CompletableFuture<Receipt> chargeLater(Order order) {
			int run = this.executions.record("future-charge", order.id());
			return CompletableFuture.completedFuture(new Receipt(order.id(), order.amount(), run));
		}

		@Idempotent(key = "#id")
		public CompletableFuture<Receipt> slowLater(String id) {
			int run = this.executions.record("future-slow", id);
			// a thread of its own: the common pool has one thread on a two-core machine
			return CompletableFuture.supplyAsync(() -> {
				this.executions.pause();
				return new Receipt(id, BigDecimal.ONE, run);
			}, (task) -> new Thread(task, "slow-later").start());
		}

	}

}
