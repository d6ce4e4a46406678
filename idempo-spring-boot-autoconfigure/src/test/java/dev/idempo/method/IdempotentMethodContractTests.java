package dev.idempo.method;

import java.io.IOException;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.idempo.IdempotencyInProgressException;
import dev.idempo.IdempotencyKeyReusedException;
import dev.idempo.IdempotencyTemplate;
import dev.idempo.actuate.IdempotencyEndpoint;
import dev.idempo.core.CurrentIdempotentCall;
import dev.idempo.core.StorageKeys;
import dev.idempo.method.MethodTestApplication.Executions;
import dev.idempo.method.MethodTestApplication.Order;
import dev.idempo.method.MethodTestApplication.Payments;
import dev.idempo.method.MethodTestApplication.ReactivePayments;
import dev.idempo.method.MethodTestApplication.Receipt;
import dev.idempo.store.LockingStore;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.messaging.support.MessageBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.core.ParameterizedTypeReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What every store must give {@code @Idempotent(key = ...)} methods and the
 * {@link IdempotencyTemplate}, in an application without a web server: one execution per
 * key, results read back as their declared types, exceptions that store nothing,
 * {@link IdempotencyInProgressException} while a call runs, and exactly one execution
 * under concurrent calls on real threads. Each store has a subclass.
 *
 * @author idempo
 */
@SpringBootTest(classes = MethodTestApplication.class, webEnvironment = WebEnvironment.NONE)
public abstract class IdempotentMethodContractTests {

	@Autowired
	Payments payments;

	@Autowired
	Executions executions;

	@Autowired
	IdempotencyTemplate template;

	@Autowired
	ReactivePayments reactive;

	@Autowired
	MeterRegistry meters;

	@Autowired
	LockingStore store;

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	@Test
	void firstCallRunsAndLaterCallsReturnTheStoredResultWithoutRunning() {
		Order order = new Order(newKey(), new BigDecimal("12.50"));
		Receipt first = this.payments.charge(order);
		Receipt second = this.payments.charge(order);
		Receipt third = this.payments.charge(order);
		assertThat(first).isEqualTo(new Receipt(order.id(), new BigDecimal("12.50"), 1));
		assertThat(second).isEqualTo(first);
		assertThat(third).isEqualTo(first);
		assertThat(this.executions.count("charge", order.id())).isOne();
	}

	@Test
	void genericResultsComeBackAsTheirDeclaredType() {
		String batch = newKey();
		List<Order> orders = List.of(new Order("a", BigDecimal.ONE), new Order("b", BigDecimal.TEN));
		List<Receipt> first = this.payments.chargeAll(batch, orders);
		List<Receipt> second = this.payments.chargeAll(batch, orders);
		assertThat(second).isEqualTo(first).hasSize(2);
		assertThat(second.get(0)).isInstanceOf(Receipt.class);
		assertThat(this.executions.count("chargeAll", batch)).isOne();
	}

	@Test
	void nullVoidAndPrimitiveResultsAreStoredToo() {
		String key = newKey();
		assertThat(this.payments.nothing(key)).isNull();
		assertThat(this.payments.nothing(key)).isNull();
		this.payments.touch(key);
		this.payments.touch(key);
		assertThat(this.payments.count(key)).isOne();
		assertThat(this.payments.count(key)).isOne();
		assertThat(this.executions.count("nothing", key)).isOne();
		assertThat(this.executions.count("touch", key)).isOne();
		assertThat(this.executions.count("count", key)).isOne();
	}

	@Test
	void oneKeyOnTwoMethodsIsTwoRecords() {
		String key = newKey();
		this.payments.touch(key);
		assertThat(this.payments.count(key)).isOne();
		assertThat(this.executions.count("touch", key)).isOne();
		assertThat(this.executions.count("count", key)).isOne();
	}

	@Test
	void anExceptionStoresNothingPropagatesUnchangedAndTheNextCallRunsAgain() throws Exception {
		String key = newKey();
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> this.payments.failTwice(key))
			.withMessage("failure 1");
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> this.payments.failTwice(key))
			.withMessage("failure 2");
		Receipt third = this.payments.failTwice(key);
		assertThat(third.run()).isEqualTo(3);
		assertThat(this.payments.failTwice(key)).isEqualTo(third);
		assertThat(this.executions.count("failTwice", key)).isEqualTo(3);
	}

	@Test
	void aCallWhileAnotherHoldsTheKeyThrowsInProgressAtOnce() throws Exception {
		String key = newKey();
		this.executions.hold();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Receipt> first = executor.submit(() -> this.payments.slow(key));
			assertThat(this.executions.awaitEntered()).isTrue();
			long start = System.nanoTime();
			assertThatExceptionOfType(IdempotencyInProgressException.class).isThrownBy(() -> this.payments.slow(key))
				.satisfies((ex) -> assertThat(ex.getScope()).startsWith("method:").contains("#slow("));
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
			this.executions.release();
			Receipt stored = first.get(20, TimeUnit.SECONDS);
			assertThat(this.payments.slow(key)).isEqualTo(stored);
			assertThat(this.executions.count("slow", key)).isOne();
		}
		finally {
			this.executions.release();
			executor.shutdownNow();
		}
	}

	@Test
	void lockOnlyRunsEveryLaterCallButNeverTwoAtOnce() throws Exception {
		String key = newKey();
		this.executions.hold();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Integer> first = executor.submit(() -> this.payments.lockOnly(key));
			assertThat(this.executions.awaitEntered()).isTrue();
			assertThatExceptionOfType(IdempotencyInProgressException.class)
				.isThrownBy(() -> this.payments.lockOnly(key));
			this.executions.release();
			assertThat(first.get(20, TimeUnit.SECONDS)).isOne();
			assertThat(this.payments.lockOnly(key)).isEqualTo(2);
		}
		finally {
			this.executions.release();
			executor.shutdownNow();
		}
	}

	@Test
	void manyThreadsWithOneKeyRunTheMethodExactlyOnce() throws Exception {
		int threads = 16;
		for (int round = 0; round < 5; round++) {
			String key = newKey();
			Order order = new Order(key, BigDecimal.ONE);
			CountDownLatch start = new CountDownLatch(1);
			AtomicInteger inProgress = new AtomicInteger();
			ExecutorService executor = Executors.newFixedThreadPool(threads);
			try {
				List<Future<Receipt>> results = new ArrayList<>();
				for (int i = 0; i < threads; i++) {
					results.add(executor.submit(() -> {
						start.await();
						try {
							return this.payments.charge(order);
						}
						catch (IdempotencyInProgressException ex) {
							inProgress.incrementAndGet();
							return null;
						}
					}));
				}
				start.countDown();
				List<Receipt> receipts = new ArrayList<>();
				for (Future<Receipt> result : results) {
					Receipt receipt = result.get(30, TimeUnit.SECONDS);
					if (receipt != null) {
						receipts.add(receipt);
					}
				}
				assertThat(this.executions.count("charge", key)).isOne();
				assertThat(receipts).hasSize(threads - inProgress.get()).allMatch((receipt) -> receipt.run() == 1);
				assertThat(this.payments.charge(order).run()).isOne();
				assertThat(this.executions.count("charge", key)).isOne();
			}
			finally {
				executor.shutdownNow();
			}
		}
	}

	@Test
	void theSameKeyWithOtherArgumentsThrowsInsteadOfReturningTheOtherCallsResult() {
		String key = newKey();
		this.payments.charge(new Order(key, BigDecimal.ONE));
		assertThatExceptionOfType(IdempotencyKeyReusedException.class)
			.isThrownBy(() -> this.payments.charge(new Order(key, BigDecimal.TEN)));
		assertThat(this.executions.count("charge", key)).isOne();
	}

	@Test
	void aRedeliveredMessageReplaysButAnotherPayloadUnderItsKeyIsRefused() {
		String key = newKey();
		// the same record delivered again at another offset: its payload decides, not its
		// headers
		int first = this.payments.consume(new ConsumerRecord<>("orders", 0, 7, key, "{\"amount\":1}"));
		assertThat(this.payments.consume(new ConsumerRecord<>("orders", 1, 42, key, "{\"amount\":1}")))
			.isEqualTo(first);
		assertThatExceptionOfType(IdempotencyKeyReusedException.class)
			.isThrownBy(() -> this.payments.consume(new ConsumerRecord<>("orders", 0, 8, key, "{\"amount\":10}")));
		assertThat(this.executions.count("consume", key)).isOne();
		int received = this.payments.receive(MessageBuilder.withPayload("one").setHeader("orderId", key).build());
		assertThat(this.payments.receive(MessageBuilder.withPayload("one").setHeader("orderId", key).build()))
			.isEqualTo(received);
		assertThatExceptionOfType(IdempotencyKeyReusedException.class).isThrownBy(
				() -> this.payments.receive(MessageBuilder.withPayload("two").setHeader("orderId", key).build()));
		assertThat(this.executions.count("receive", key)).isOne();
	}

	@Test
	void keyExpressionsByPositionRootAndBean() {
		String key = newKey();
		assertThat(this.payments.positional(key, 1)).isOne();
		assertThat(this.payments.positional(key, 1)).isOne();
		assertThat(this.payments.positional(key, 2)).isOne();
		assertThat(this.payments.byMethodName(key)).isOne();
		assertThat(this.payments.byMethodName(key)).isOne();
		assertThat(this.payments.withBean(key)).isOne();
		assertThat(this.payments.withBean(key)).isOne();
		assertThat(this.executions.count("positional", key + ":1")).isOne();
		assertThat(this.executions.count("positional", key + ":2")).isOne();
	}

	@Test
	void aNullKeyRunsUnprotectedUnlessRequired() {
		assertThat(this.payments.optionalKey(null)).isEqualTo(this.executions.count("optionalKey", "null"));
		int before = this.executions.count("optionalKey", "null");
		this.payments.optionalKey(null);
		assertThat(this.executions.count("optionalKey", "null")).isEqualTo(before + 1);
		assertThatIllegalArgumentException().isThrownBy(() -> this.payments.requiredKey(null))
			.withMessageContaining("Payments.requiredKey(String)");
		assertThat(this.executions.count("requiredKey", "null")).isZero();
	}

	@Test
	void aKeyExpressionThatFailsAtRunTimeNamesTheMethod() {
		assertThatIllegalStateException().isThrownBy(() -> this.payments.brokenKey(new Order(newKey(), BigDecimal.ONE)))
			.withMessageContaining("#order.missing()")
			.withMessageContaining("Payments.brokenKey(Order)");
	}

	@Test
	void theEndpointFindsAMethodRecordByItsScope() throws Exception {
		Order order = new Order(newKey(), new BigDecimal("3.00"));
		this.payments.charge(order);
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store, true);
		String scope = "method:" + Payments.class.getName() + "#charge(" + Order.class.getName() + ")";
		assertThat(IdempotentMethod.scope(Payments.class.getMethod("charge", Order.class), Payments.class))
			.isEqualTo(scope);
		Map<String, Object> record = endpoint.record(order.id(), scope);
		assertThat(record).containsEntry("state", "completed").containsEntry("status", 200);
		assertThat((String) record.get("body")).contains("\"orderId\":\"" + order.id() + "\"");
		assertThat(endpoint.record(order.id(), "anonymous")).containsEntry("state", "absent");
	}

	/**
	 * A method that returns with its thread's interrupt flag set (it caught
	 * {@code InterruptedException} and finished) has had its effects: its result is
	 * stored all the same, so the next call does not run it a second time.
	 */
	@Test
	void aMethodThatReturnsInterruptedHasItsResultStored() {
		String key = newKey();
		try {
			assertThat(this.payments.interruptsItself(key)).isOne();
			assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept for the caller").isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(this.payments.interruptsItself(key)).isOne();
		Thread.interrupted();
		assertThat(this.executions.count("interruptsItself", key)).isOne();
	}

	/**
	 * A method that throws with its thread's interrupt flag set frees its key at once:
	 * the next call runs, instead of meeting a claim that nobody holds any more.
	 */
	@Test
	void aMethodThatFailsInterruptedReleasesItsKey() {
		String key = newKey();
		try {
			assertThatIllegalStateException().isThrownBy(() -> this.payments.interruptedAndFails(key))
				.withMessage("interrupted in run 1");
			assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept for the caller").isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThatIllegalStateException().isThrownBy(() -> this.payments.interruptedAndFails(key))
			.withMessage("interrupted in run 2");
		Thread.interrupted();
	}

	/**
	 * A result that cannot be written as its declared type (here the template is told
	 * {@code Receipt} and given a string) is not stored, and its key is freed whatever
	 * the serializer threw.
	 */
	@Test
	@SuppressWarnings({ "unchecked", "rawtypes" })
	void aResultThatCannotBeWrittenFreesItsKey() {
		String key = newKey();
		Class<Object> declared = (Class) Receipt.class;
		AtomicInteger runs = new AtomicInteger();
		for (int i = 1; i <= 2; i++) {
			try {
				this.template.execute("mistyped", key, declared, () -> "run " + runs.incrementAndGet());
			}
			catch (RuntimeException ex) {
				assertThat(ex).isNotInstanceOf(IdempotencyInProgressException.class);
			}
			assertThat(runs).hasValue(i);
		}
	}

	/**
	 * An {@code Error} raised while the result is written (a serializer that fails hard)
	 * propagates, and the key is freed all the same rather than left claimed.
	 */
	@Test
	void anErrorWhileTheResultIsWrittenFreesItsKey() {
		String key = newKey();
		AtomicInteger runs = new AtomicInteger();
		for (int i = 1; i <= 2; i++) {
			assertThatExceptionOfType(AssertionError.class)
				.isThrownBy(() -> this.template.execute("unwritable", key, Unwritable.class,
						() -> new Unwritable(runs.incrementAndGet())))
				.withMessage("cannot be written");
			assertThat(runs).hasValue(i);
		}
	}

	/** A result whose only property fails hard when read. */
	public record Unwritable(int run) {

		@Override
		public int run() {
			throw new AssertionError("cannot be written");
		}

	}

	@Test
	void selfInvocationIsNotIntercepted() {
		String key = newKey();
		assertThat(this.payments.callsItself(key)).isOne();
		assertThat(this.payments.callsItself(key)).isEqualTo(2);
	}

	@Test
	void theRunningCallIsBoundWithItsStorageKeyForOutboundCalls() {
		String key = newKey();
		List<String> identities = new ArrayList<>();
		this.template.execute("bound", key, () -> identities.add(CurrentIdempotentCall.current().identity()));
		assertThat(identities).containsExactly(StorageKeys.of("template:bound", key));
		assertThat(CurrentIdempotentCall.current()).isNull();
	}

	@Test
	void templateRunsOncePerScopeAndKey() {
		String key = newKey();
		AtomicInteger runs = new AtomicInteger();
		Receipt first = this.template.execute("settlement", key, Receipt.class,
				() -> new Receipt(key, BigDecimal.ONE, runs.incrementAndGet()));
		Receipt second = this.template.execute("settlement", key, Receipt.class,
				() -> new Receipt(key, BigDecimal.ONE, runs.incrementAndGet()));
		Receipt otherScope = this.template.execute("refund", key, Receipt.class,
				() -> new Receipt(key, BigDecimal.ONE, runs.incrementAndGet()));
		assertThat(second).isEqualTo(first);
		assertThat(otherScope.run()).isEqualTo(2);
		assertThat(runs).hasValue(2);
	}

	@Test
	void templateReadsGenericTypesAndRunsVoidWork() {
		String key = newKey();
		AtomicInteger runs = new AtomicInteger();
		ParameterizedTypeReference<List<Receipt>> receipts = new ParameterizedTypeReference<>() {
		};
		List<Receipt> first = this.template.execute("batch", key, receipts,
				() -> List.of(new Receipt(key, BigDecimal.ONE, runs.incrementAndGet())));
		List<Receipt> second = this.template.execute("batch", key, receipts,
				() -> List.of(new Receipt(key, BigDecimal.ONE, runs.incrementAndGet())));
		assertThat(second).isEqualTo(first);
		assertThat(second.get(0)).isInstanceOf(Receipt.class);
		this.template.execute("void", key, runs::incrementAndGet);
		this.template.execute("void", key, runs::incrementAndGet);
		assertThat(runs).hasValue(2);
	}

	@Test
	void templateOptionsSetTheTtlAndCompareTheRequest() throws Exception {
		String key = newKey();
		AtomicInteger runs = new AtomicInteger();
		IdempotencyTemplate shortLived = this.template
			.with(IdempotencyTemplate.Options.defaults().ttl(Duration.ofSeconds(1)));
		shortLived.execute("ttl", key, runs::incrementAndGet);
		shortLived.execute("ttl", key, runs::incrementAndGet);
		assertThat(runs).hasValue(1);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (runs.get() == 1 && System.nanoTime() < deadline) {
			Thread.sleep(100);
			shortLived.execute("ttl", key, runs::incrementAndGet);
		}
		assertThat(runs).hasValue(2);
		IdempotencyTemplate withRequest = this.template
			.with(IdempotencyTemplate.Options.defaults().request(new Order(key, BigDecimal.ONE)));
		withRequest.execute("request", key, runs::incrementAndGet);
		withRequest.execute("request", key, runs::incrementAndGet);
		assertThat(runs).hasValue(3);
		assertThatExceptionOfType(IdempotencyKeyReusedException.class).isThrownBy(
				() -> this.template.with(IdempotencyTemplate.Options.defaults().request(new Order(key, BigDecimal.TEN)))
					.execute("request", key, runs::incrementAndGet));
		assertThat(runs).hasValue(3);
	}

	@Test
	void templateWorkThatThrowsStoresNothing() {
		String key = newKey();
		AtomicInteger runs = new AtomicInteger();
		assertThatIllegalStateException().isThrownBy(() -> this.template.execute("failing", key, Integer.class, () -> {
			runs.incrementAndGet();
			throw new IllegalStateException("boom");
		})).withMessage("boom");
		assertThat(this.template.execute("failing", key, Integer.class, runs::incrementAndGet)).isEqualTo(2);
		assertThat(this.template.execute("failing", key, Integer.class, runs::incrementAndGet)).isEqualTo(2);
	}

	@Test
	void metricsTellMethodAndTemplateCallsFromWebRequests() {
		String key = newKey();
		double methodBefore = count("method", "replayed");
		double templateBefore = count("template", "executed");
		this.payments.count(key);
		this.payments.count(key);
		this.template.execute("metrics", key, () -> {
		});
		assertThat(count("method", "replayed")).isEqualTo(methodBefore + 1);
		assertThat(count("template", "executed")).isEqualTo(templateBefore + 1);
		assertThat(this.meters.find("idempo.requests").tag("source", "web").counters()).isNotEmpty()
			.allMatch((counter) -> counter.count() == 0);
	}

	/**
	 * A reactive call's store operations are timed as a blocking call's are, whichever
	 * reactive store serves it.
	 */
	@Test
	void reactiveCallsRecordTheirStoreOperations() {
		double claims = storeOperations("claim");
		double completes = storeOperations("complete");
		Order order = new Order(newKey(), BigDecimal.ONE);
		assertThat(await(this.reactive.charge(order))).isEqualTo(new Receipt(order.id(), BigDecimal.ONE, 1));
		String timers = this.meters.find("idempo.store.operations")
			.timers()
			.stream()
			.map((timer) -> timer.getId() + "=" + timer.count())
			.toList()
			.toString();
		assertThat(storeOperations("claim")).as(timers).isGreaterThanOrEqualTo(claims + 1);
		assertThat(storeOperations("complete")).as(timers).isGreaterThanOrEqualTo(completes + 1);
	}

	private double storeOperations(String operation) {
		var timer = this.meters.find("idempo.store.operations")
			.tags("store", this.store.name(), "operation", operation, "result", "success")
			.timer();
		return (timer != null) ? timer.count() : 0;
	}

	private double count(String source, String outcome) {
		var counter = this.meters.find("idempo.requests").tag("source", source).tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}

	/**
	 * Subscribes from a non-blocking thread (where BlockHound fails any blocking call)
	 * and waits for the outcome on the test's thread.
	 */
	static <T> @Nullable T await(Mono<T> mono) {
		return mono.subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(20));
	}

	@Test
	void aMonoIsClaimedWhenSubscribedAndLaterSubscriptionsGetTheStoredValue() {
		Order order = new Order(newKey(), new BigDecimal("3.20"));
		Mono<Receipt> charge = this.reactive.charge(order);
		assertThat(this.executions.count("mono-charge", order.id())).isZero();
		Receipt first = await(charge);
		assertThat(await(charge)).isEqualTo(first);
		assertThat(await(this.reactive.charge(order))).isEqualTo(first);
		assertThat(first).isEqualTo(new Receipt(order.id(), order.amount(), 1));
		assertThat(this.executions.count("mono-charge", order.id())).isOne();
	}

	@Test
	void aMonoErrorStoresNothingAndTheNextSubscriptionRunsAgain() {
		String key = newKey();
		Mono<Receipt> call = this.reactive.failOnce(key);
		assertThatIllegalStateException().isThrownBy(() -> await(call)).withMessage("first run fails");
		assertThat(await(call)).isEqualTo(new Receipt(key, BigDecimal.TEN, 2));
		assertThat(await(call)).isEqualTo(new Receipt(key, BigDecimal.TEN, 2));
		assertThat(this.executions.count("mono-fail-once", key)).isEqualTo(2);
	}

	@Test
	void aMonoResultThatFailsHardWhenWrittenFreesItsKey() {
		String key = newKey();
		for (int i = 1; i <= 2; i++) {
			// block() wraps an Error; the Mono itself signals it as it is
			assertThatThrownBy(() -> await(this.reactive.unwritable(key)))
				.satisfies((ex) -> assertThat(Exceptions.unwrap(ex)).isInstanceOf(AssertionError.class)
					.hasMessage("cannot be written"));
			assertThat(this.executions.count("mono-unwritable", key)).isEqualTo(i);
		}
	}

	@Test
	void anEmptyMonoIsStoredAndReplayedEmpty() {
		String key = newKey();
		assertThat(await(this.reactive.nothing(key))).isNull();
		assertThat(await(this.reactive.nothing(key))).isNull();
		assertThat(this.executions.count("mono-nothing", key)).isOne();
	}

	@Test
	void aMonoWhileAnotherSubscriptionHoldsTheKeyErrorsInProgressAndACancelledOneFreesIt() throws Exception {
		String key = newKey();
		this.executions.hold();
		Disposable running = this.reactive.slow(key).subscribeOn(Schedulers.parallel()).subscribe();
		try {
			assertThat(this.executions.awaitEntered()).isTrue();
			assertThatExceptionOfType(IdempotencyInProgressException.class)
				.isThrownBy(() -> await(this.reactive.slow(key)));
			running.dispose();
		}
		finally {
			this.executions.release();
		}
		// the release is sent when the subscription is cancelled: poll for the free key
		Receipt again = pollUntilRun(() -> await(this.reactive.slow(key)));
		assertThat(again.run()).isEqualTo(2);
		assertThat(await(this.reactive.slow(key))).isEqualTo(again);
	}

	@Test
	void aFutureIsClaimedWhenCalledAndLaterCallsGetTheStoredValue() throws Exception {
		Order order = new Order(newKey(), new BigDecimal("8.00"));
		Receipt first = this.reactive.chargeLater(order).get(20, TimeUnit.SECONDS);
		assertThat(this.reactive.chargeLater(order).get(20, TimeUnit.SECONDS)).isEqualTo(first);
		assertThat(first.run()).isOne();
		assertThat(this.executions.count("future-charge", order.id())).isOne();
	}

	@Test
	void aFutureMeetingItsKeyInProgressCompletesExceptionally() throws Exception {
		String key = newKey();
		this.executions.hold();
		CompletableFuture<Receipt> running = this.reactive.slowLater(key);
		try {
			assertThat(this.executions.awaitEntered()).isTrue();
			assertThatExceptionOfType(ExecutionException.class)
				.isThrownBy(() -> this.reactive.slowLater(key).get(20, TimeUnit.SECONDS))
				.withCauseInstanceOf(IdempotencyInProgressException.class);
		}
		finally {
			this.executions.release();
		}
		Receipt stored = running.get(20, TimeUnit.SECONDS);
		assertThat(this.reactive.slowLater(key).get(20, TimeUnit.SECONDS)).isEqualTo(stored);
		assertThat(this.executions.count("future-slow", key)).isOne();
	}

	@Test
	void manySubscriptionsOfOneKeyAtOnceRunTheMonoExactlyOnce() throws Exception {
		Order order = new Order(newKey(), BigDecimal.ONE);
		int calls = 32;
		CountDownLatch start = new CountDownLatch(1);
		List<CompletableFuture<Object>> outcomes = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			outcomes.add(Mono.fromRunnable(() -> awaitLatch(start))
				.then(this.reactive.charge(order))
				.<Object>map((receipt) -> receipt)
				.onErrorResume(IdempotencyInProgressException.class, Mono::just)
				.subscribeOn(Schedulers.boundedElastic())
				.toFuture());
		}
		start.countDown();
		for (CompletableFuture<Object> outcome : outcomes) {
			assertThat(outcome.get(20, TimeUnit.SECONDS)).isInstanceOfAny(Receipt.class,
					IdempotencyInProgressException.class);
		}
		assertThat(this.executions.count("mono-charge", order.id())).isOne();
	}

	@Test
	void theMonoCarriesItsExecutionInItsContextForOutboundCalls() {
		String key = newKey();
		assertThat(await(this.reactive.identity(key))).isEqualTo(StorageKeys
			.of(IdempotentMethod.scope(methodNamed(ReactivePayments.class, "identity"), ReactivePayments.class), key));
	}

	private static Method methodNamed(Class<?> type, String name) {
		return Arrays.stream(type.getMethods())
			.filter((method) -> method.getName().equals(name))
			.findFirst()
			.orElseThrow();
	}

	private static void awaitLatch(CountDownLatch latch) {
		try {
			assertThat(latch.await(20, TimeUnit.SECONDS)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static <T> T pollUntilRun(Supplier<T> call) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
		while (true) {
			try {
				return call.get();
			}
			catch (IdempotencyInProgressException ex) {
				if (System.nanoTime() > deadline) {
					throw ex;
				}
				Thread.sleep(20);
			}
		}
	}

}
