package dev.idempo.webflux;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.idempo.Idempotent;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.RequestFingerprints;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.core.StorageKeys;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.OffloadedLockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilterChain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The filter on the in-memory store, without a server: what becomes of a key when the
 * client goes away, that a replay is the stored response, and what a body of declared
 * length that streams is read for, and when.
 *
 * @author idempo
 */
class IdempotencyWebFilterTests {

	private static final LeaseRenewer RENEWER = new LeaseRenewer();

	private final InMemoryLockingStore memory = new InMemoryLockingStore(Clock.systemUTC(), 1000, 1 << 20);

	private final IdempotencyWebFilter filter = new IdempotencyWebFilter(new OffloadedLockingStore(this.memory),
			new IdempotentHandlerPolicies((value) -> value, Duration.ofHours(1), false, ResponseStoragePolicy.DEFAULT,
					FingerprintOptions.NONE),
			(exchange) -> Mono.just(handler()), new DefaultReactiveCallerScopeResolver(), IdempotencyListener.NONE,
			IdempotencySettings.defaults(), RENEWER);

	@Test
	void cancelledRequestReleasesItsKey() throws Exception {
		AtomicInteger subscribed = new AtomicInteger();
		WebFilterChain endless = (exchange) -> Mono.<Void>never().doOnSubscribe((s) -> subscribed.incrementAndGet());
		Disposable request = this.filter.filter(exchange("cancelled"), endless).subscribe();
		awaitTrue(() -> subscribed.get() == 1);
		assertThat(this.memory.claim(StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, "cancelled"),
				Duration.ofSeconds(30)))
			.isInstanceOf(ClaimResult.InProgress.class);
		request.dispose();
		awaitTrue(() -> !(this.memory.claim(StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, "cancelled"),
				Duration.ofSeconds(30)) instanceof ClaimResult.InProgress));
	}

	@Test
	void completedResponseIsReplayed() {
		AtomicInteger runs = new AtomicInteger();
		WebFilterChain created = (exchange) -> {
			runs.incrementAndGet();
			exchange.getResponse().setStatusCode(HttpStatus.CREATED);
			return exchange.getResponse()
				.writeWith(Mono
					.just(exchange.getResponse().bufferFactory().wrap("made".getBytes(StandardCharsets.UTF_8))));
		};
		MockServerWebExchange first = exchange("replayed");
		this.filter.filter(first, created).block(Duration.ofSeconds(10));
		MockServerWebExchange second = exchange("replayed");
		this.filter.filter(second, created).block(Duration.ofSeconds(10));
		assertThat(runs).hasValue(1);
		assertThat(second.getResponse().getStatusCode()).isEqualTo(HttpStatus.CREATED);
		assertThat(second.getResponse().getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(second.getResponse().getBodyAsString().block(Duration.ofSeconds(10))).isEqualTo("made");
		assertThat(first.getResponse().getBodyAsString().block(Duration.ofSeconds(10))).isEqualTo("made");
	}

	/**
	 * One renewal semantics on every stack: a lease that no renewal kept for a whole lock
	 * TTL (here every renewal fails) is lost, so the response of a handler that outlived
	 * it is not stored, the loss is counted, and the retry runs the handler again.
	 * (Before the one flow, the WebFlux filter counted a failed renewal as still owned
	 * and stored the response.)
	 */
	@Test
	void leaseThatNoRenewalKeptForALockTtlIsLostAndItsResponseNotStored() {
		ReactiveLockingStore up = new OffloadedLockingStore(this.memory);
		ReactiveLockingStore renewalsFail = new ReactiveLockingStore() {

			@Override
			public Mono<ClaimResult> claim(String key, Duration lockTtl) {
				return up.claim(key, lockTtl);
			}

			@Override
			public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
				return up.complete(lease, record, ttl);
			}

			@Override
			public Mono<Boolean> release(Lease lease) {
				return up.release(lease);
			}

			@Override
			public Mono<Boolean> renew(Lease lease, Duration lockTtl) {
				return Mono.error(new LockingStoreException("renewal cannot reach the store (test fault)"));
			}

			@Override
			public boolean leaseExpires() {
				return true;
			}

		};
		IdempotencySettings defaults = IdempotencySettings.defaults();
		Duration lockTtl = Duration.ofMillis(300);
		IdempotencySettings settings = new IdempotencySettings(defaults.keyHeader(), defaults.keyHeaderAliases(), false,
				defaults.responseTtl(), lockTtl, defaults.maxResponseSize(), defaults.maxRequestSize(),
				defaults.excludedHeaders(), defaults.conflictRetryAfter(), Duration.ZERO, false,
				defaults.storeFailureRetryAfter());
		List<ResponseOutcome> outcomes = new CopyOnWriteArrayList<>();
		IdempotencyListener listener = new IdempotencyListener() {

			@Override
			public void onResponse(Source source, ResponseOutcome outcome, NotStoredReason reason) {
				outcomes.add(outcome);
			}

		};
		IdempotencyWebFilter filter = new IdempotencyWebFilter(renewalsFail,
				new IdempotentHandlerPolicies((value) -> value, Duration.ofHours(1), false,
						ResponseStoragePolicy.DEFAULT, FingerprintOptions.NONE),
				(exchange) -> Mono.just(handler()), new DefaultReactiveCallerScopeResolver(), listener, settings,
				RENEWER);
		AtomicInteger runs = new AtomicInteger();
		// the handler outlives three lock TTLs: the scenario, not a synchronisation
		WebFilterChain slow = (exchange) -> Mono.delay(lockTtl.multipliedBy(3)).then(Mono.defer(() -> {
			runs.incrementAndGet();
			exchange.getResponse().setStatusCode(HttpStatus.CREATED);
			return exchange.getResponse()
				.writeWith(Mono
					.just(exchange.getResponse().bufferFactory().wrap("made".getBytes(StandardCharsets.UTF_8))));
		}));
		MockServerWebExchange first = exchange("outlived");
		filter.filter(first, slow).block(Duration.ofSeconds(10));
		assertThat(first.getResponse().getStatusCode()).as("the handler's client gets its response")
			.isEqualTo(HttpStatus.CREATED);
		assertThat(outcomes).containsExactly(ResponseOutcome.LOCK_LOST);
		MockServerWebExchange retry = exchange("outlived");
		filter.filter(retry, slow).block(Duration.ofSeconds(10));
		assertThat(runs).as("nothing was stored: the retry runs the handler").hasValue(2);
		assertThat(retry.getResponse().getHeaders().getFirst("Idempotent-Replayed")).isNull();
	}

	/**
	 * With fail-open, a store that cannot be reached lets the handler run unprotected; by
	 * default the request is refused with 503 and the handler does not run.
	 */
	@Test
	void unreachableStoreFailsClosedUnlessFailOpenIsSet() {
		ReactiveLockingStore up = new OffloadedLockingStore(this.memory);
		ReactiveLockingStore down = new ReactiveLockingStore() {

			@Override
			public Mono<ClaimResult> claim(String key, Duration lockTtl) {
				return Mono.error(new LockingStoreException("store is down (test outage)"));
			}

			@Override
			public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
				return up.complete(lease, record, ttl);
			}

			@Override
			public Mono<Boolean> release(Lease lease) {
				return up.release(lease);
			}

		};
		AtomicInteger runs = new AtomicInteger();
		WebFilterChain handler = (exchange) -> Mono.fromRunnable(runs::incrementAndGet);
		MockServerWebExchange refused = exchange("down");
		filter(down, false).filter(refused, handler).block(Duration.ofSeconds(10));
		assertThat(refused.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
		assertThat(refused.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("5");
		assertThat(runs).hasValue(0);
		filter(down, true).filter(exchange("down"), handler).block(Duration.ofSeconds(10));
		assertThat(runs).hasValue(1);
	}

	/**
	 * A body of declared length streams: the key is claimed before it is read, so a
	 * request meeting its key in progress gets 409 and its body is never subscribed to.
	 */
	@Test
	void aStreamedRequestMeetingItsKeyInProgressIs409WithoutItsBodyBeingRead() {
		ClaimResult held = this.memory.claim(StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, "busy"),
				Duration.ofSeconds(30));
		assertThat(held).isInstanceOf(ClaimResult.Acquired.class);
		AtomicBoolean read = new AtomicBoolean();
		AtomicInteger runs = new AtomicInteger();
		MockServerWebExchange duplicate = streamed("busy", 2, Flux.defer(() -> {
			read.set(true);
			return Flux.just(buffer("{}"));
		}));
		this.filter.filter(duplicate, (exchange) -> Mono.fromRunnable(runs::incrementAndGet))
			.block(Duration.ofSeconds(10));
		assertThat(duplicate.getResponse().getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
		assertThat(read).as("the body was read").isFalse();
		assertThat(runs).hasValue(0);
	}

	/**
	 * The handler runs before the body has arrived, reads its first buffer and answers;
	 * the rest is digested (and released) before the response is stored, so the record's
	 * fingerprint is the whole body's, the same as the body held whole: a retry replays,
	 * read and released as it is discarded, and a retry whose last byte differs is 422.
	 */
	@Test
	void aHandlerThatReadsPartOfAStreamedBodyRunsBeforeItEndsAndItsRecordCoversTheWholeBody() throws Exception {
		Sinks.Many<DataBuffer> body = Sinks.many().unicast().onBackpressureBuffer();
		AtomicInteger runs = new AtomicInteger();
		WebFilterChain readsTheFirstBuffer = (exchange) -> exchange.getRequest().getBody().next().flatMap((first) -> {
			DataBufferUtils.release(first);
			runs.incrementAndGet();
			return write(exchange, HttpStatus.CREATED, "made");
		});
		MockServerWebExchange first = streamed("partial", 7, body.asFlux());
		AtomicBoolean done = new AtomicBoolean();
		this.filter.filter(first, readsTheFirstBuffer).doFinally((signal) -> done.set(true)).subscribe();
		body.tryEmitNext(buffer("{\"a\""));
		awaitTrue(() -> runs.get() == 1);
		assertThat(done).as("the response waits for the rest of the body").isFalse();
		assertThat(storedRecord("partial")).isNull();
		body.tryEmitNext(buffer(":1}"));
		body.tryEmitComplete();
		awaitTrue(done::get);
		assertThat(first.getResponse().getStatusCode()).isEqualTo(HttpStatus.CREATED);
		assertThat(storedRecord("partial").fingerprint())
			.isEqualTo(RequestFingerprints.of("POST", "/orders", null, "{\"a\":1}".getBytes(StandardCharsets.UTF_8)));
		CountedDataBuffer[] same = { counted("{\"a\""), counted(":1}") };
		MockServerWebExchange retry = streamed("partial", 7, Flux.just(same));
		this.filter.filter(retry, readsTheFirstBuffer).block(Duration.ofSeconds(10));
		assertThat(retry.getResponse().getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(retry.getResponse().getBodyAsString().block(Duration.ofSeconds(10))).isEqualTo("made");
		CountedDataBuffer[] other = { counted("{\"a\""), counted(":2}") };
		MockServerWebExchange reused = streamed("partial", 7, Flux.just(other));
		this.filter.filter(reused, readsTheFirstBuffer).block(Duration.ofSeconds(10));
		assertThat(reused.getResponse().getStatusCode()).isEqualTo(HttpStatus.UNPROCESSABLE_CONTENT);
		assertThat(runs).hasValue(1);
		for (CountedDataBuffer buffer : List.of(same[0], same[1], other[0], other[1])) {
			assertThat(buffer.references).as("released").hasValue(0);
		}
	}

	/**
	 * A handler that never subscribes to its body answers before the body arrived; the
	 * flow reads the body for the fingerprint (releasing it) before the response is
	 * stored, and the record's fingerprint is the body's.
	 */
	@Test
	void aHandlerThatNeverReadsAStreamedBodyStoresTheBodysFingerprint() throws Exception {
		Sinks.Many<DataBuffer> body = Sinks.many().unicast().onBackpressureBuffer();
		AtomicInteger runs = new AtomicInteger();
		WebFilterChain ignoresTheBody = (exchange) -> {
			runs.incrementAndGet();
			return write(exchange, HttpStatus.CREATED, "made");
		};
		AtomicBoolean done = new AtomicBoolean();
		this.filter.filter(streamed("ignored", 2, body.asFlux()), ignoresTheBody)
			.doFinally((signal) -> done.set(true))
			.subscribe();
		awaitTrue(() -> runs.get() == 1);
		CountedDataBuffer sent = counted("{}");
		body.tryEmitNext(sent);
		body.tryEmitComplete();
		awaitTrue(done::get);
		assertThat(sent.references).as("released").hasValue(0);
		assertThat(storedRecord("ignored").fingerprint())
			.isEqualTo(RequestFingerprints.of("POST", "/orders", null, "{}".getBytes(StandardCharsets.UTF_8)));
		MockServerWebExchange retry = exchange("ignored");
		this.filter.filter(retry, ignoresTheBody).block(Duration.ofSeconds(10));
		assertThat(retry.getResponse().getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(runs).hasValue(1);
	}

	/**
	 * The body fails after the handler answered (the client went away while the rest was
	 * read): the response is not an answer to the request declared, so nothing is stored
	 * and the key is released.
	 */
	@Test
	void aStreamedBodyThatFailsAfterTheHandlerAnsweredStoresNothingAndReleasesTheKey() throws Exception {
		Sinks.Many<DataBuffer> body = Sinks.many().unicast().onBackpressureBuffer();
		AtomicInteger runs = new AtomicInteger();
		WebFilterChain readsTheFirstBuffer = (exchange) -> exchange.getRequest().getBody().next().flatMap((first) -> {
			DataBufferUtils.release(first);
			runs.incrementAndGet();
			return write(exchange, HttpStatus.CREATED, "made");
		});
		AtomicBoolean done = new AtomicBoolean();
		this.filter.filter(streamed("cut", 1000, body.asFlux()), readsTheFirstBuffer)
			.doFinally((signal) -> done.set(true))
			.subscribe((ignored) -> {
			}, (ex) -> {
			});
		body.tryEmitNext(buffer("{\"a\""));
		awaitTrue(() -> runs.get() == 1);
		body.tryEmitError(new IllegalStateException("the client went away (test)"));
		awaitTrue(done::get);
		assertThat(storedRecord("cut")).isNull();
		ClaimResult again = this.memory.claim(StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, "cut"),
				Duration.ofSeconds(30));
		assertThat(again).as("the key was released").isInstanceOf(ClaimResult.Acquired.class);
	}

	/**
	 * A client gone silent mid-body, its connection open: once no byte came for the
	 * request body timeout while the handler read, the body fails with 408, the key is
	 * released (nothing stored), and the complete retry runs the handler.
	 */
	@Test
	void aStreamedBodyThatGoesIdleFailsWith408AndReleasesTheKey() throws Exception {
		Sinks.Many<DataBuffer> body = Sinks.many().unicast().onBackpressureBuffer();
		this.filter.setRequestBodyTimeout(Duration.ofMillis(200));
		AtomicInteger runs = new AtomicInteger();
		WebFilterChain readsTheBody = (exchange) -> DataBufferUtils.join(exchange.getRequest().getBody())
			.flatMap((whole) -> {
				DataBufferUtils.release(whole);
				runs.incrementAndGet();
				return write(exchange, HttpStatus.CREATED, "made");
			});
		AtomicReference<Throwable> failure = new AtomicReference<>();
		AtomicBoolean done = new AtomicBoolean();
		this.filter.filter(streamed("silent", 7, body.asFlux()), readsTheBody)
			.doFinally((signal) -> done.set(true))
			.subscribe((ignored) -> {
			}, failure::set);
		body.tryEmitNext(buffer("{\"a\""));
		awaitTrue(done::get);
		assertThat(failure.get()).isInstanceOfSatisfying(ResponseStatusException.class,
				(ex) -> assertThat(ex.getStatusCode()).isEqualTo(HttpStatus.REQUEST_TIMEOUT));
		assertThat(runs).hasValue(0);
		assertThat(storedRecord("silent")).isNull();
		ClaimResult again = this.memory.claim(StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, "silent"),
				Duration.ofSeconds(30));
		assertThat(again).as("the key was released").isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void theRequestBodyTimeoutMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.filter.setRequestBodyTimeout(Duration.ZERO));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.filter.setRequestBodyTimeout(Duration.ofSeconds(-1)));
	}

	/**
	 * A body that Spring Cloud Gateway cached (its {@code Retry} and
	 * {@code CircuitBreaker} filters have it cached, before this filter runs, since they
	 * read it once per attempt) does not stream: it is read whole from the cache, and
	 * what runs behind the filter may read it as often as it likes.
	 */
	@Test
	void aBodyTheGatewayCachedIsHeldWholeAndCanBeReadAgain() {
		DataBuffer cached = buffer("{\"a\":1}");
		MockServerWebExchange exchange = streamed("cached", 7,
				Flux.defer(() -> Flux.just(cached.slice(0, cached.readableByteCount()))));
		exchange.getAttributes().put(IdempotencyWebFilter.GATEWAY_CACHED_REQUEST_BODY_ATTR, cached);
		List<String> attempts = new CopyOnWriteArrayList<>();
		WebFilterChain readsTwice = (forwarded) -> {
			Mono<String> read = DataBufferUtils.join(forwarded.getRequest().getBody()).map((whole) -> {
				String text = whole.toString(StandardCharsets.UTF_8);
				DataBufferUtils.release(whole);
				return text;
			});
			return read.doOnNext(attempts::add)
				.then(read.doOnNext(attempts::add))
				.then(write(forwarded, HttpStatus.CREATED, "made"));
		};
		this.filter.filter(exchange, readsTwice).block(Duration.ofSeconds(10));
		assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.CREATED);
		assertThat(attempts).containsExactly("{\"a\":1}", "{\"a\":1}");
		assertThat(storedRecord("cached").fingerprint())
			.isEqualTo(RequestFingerprints.of("POST", "/orders", null, "{\"a\":1}".getBytes(StandardCharsets.UTF_8)));
	}

	/**
	 * A streamed request meets a completed record whose response cannot be read: its body
	 * was read to compare fingerprints, so even failing open the handler cannot run on
	 * it. 503, and the handler does not run.
	 */
	@Test
	void anUnreadableRecordIs503EvenFailingOpenOnceAStreamedBodyWasReadToCompareIt() {
		String storageKey = StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, "unreadable");
		ClaimResult claim = this.memory.claim(storageKey, Duration.ofSeconds(30));
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
		byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
		assertThat(
				this.memory
					.complete(((ClaimResult.Acquired) claim).lease(),
							new StoredRecord(RequestFingerprints.of("POST", "/orders", null, body),
									"not an envelope".getBytes(StandardCharsets.UTF_8)),
							Duration.ofMinutes(5)))
			.isTrue();
		AtomicInteger runs = new AtomicInteger();
		MockServerWebExchange retry = streamed("unreadable", 2, Flux.just(buffer("{}")));
		filter(new OffloadedLockingStore(this.memory), true)
			.filter(retry, (exchange) -> Mono.fromRunnable(runs::incrementAndGet))
			.block(Duration.ofSeconds(10));
		assertThat(retry.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
		assertThat(runs).hasValue(0);
	}

	private StoredRecord storedRecord(String key) {
		return this.memory.inspect(StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, key)).record();
	}

	private static Mono<Void> write(ServerWebExchange exchange, HttpStatus status, String body) {
		exchange.getResponse().setStatusCode(status);
		return exchange.getResponse()
			.writeWith(Mono.just(exchange.getResponse().bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8))));
	}

	private static DataBuffer buffer(String text) {
		return DefaultDataBufferFactory.sharedInstance.wrap(text.getBytes(StandardCharsets.UTF_8));
	}

	private static CountedDataBuffer counted(String text) {
		return new CountedDataBuffer(buffer(text));
	}

	private static MockServerWebExchange streamed(String key, long declared, Flux<DataBuffer> body) {
		return MockServerWebExchange.from(MockServerHttpRequest.post("/orders")
			.header("Idempotency-Key", key)
			.contentType(MediaType.APPLICATION_JSON)
			.contentLength(declared)
			.body(body));
	}

	private static IdempotencyWebFilter filter(ReactiveLockingStore store, boolean failOpen) {
		IdempotencySettings defaults = IdempotencySettings.defaults();
		IdempotencySettings settings = new IdempotencySettings(defaults.keyHeader(), defaults.keyHeaderAliases(), false,
				defaults.responseTtl(), defaults.lockTtl(), defaults.maxResponseSize(), defaults.maxRequestSize(),
				defaults.excludedHeaders(), defaults.conflictRetryAfter(), Duration.ZERO, failOpen,
				defaults.storeFailureRetryAfter());
		return new IdempotencyWebFilter(store,
				new IdempotentHandlerPolicies((value) -> value, Duration.ofHours(1), false,
						ResponseStoragePolicy.DEFAULT, FingerprintOptions.NONE),
				(exchange) -> Mono.just(handler()), new DefaultReactiveCallerScopeResolver(), IdempotencyListener.NONE,
				settings, RENEWER);
	}

	private static MockServerWebExchange exchange(String key) {
		return MockServerWebExchange
			.from(MockServerHttpRequest.post("/orders").header("Idempotency-Key", key).body("{}"));
	}

	private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as("condition not met in time").isLessThan(deadline);
			Thread.onSpinWait();
		}
	}

	private static HandlerMethod handler() {
		try {
			return new HandlerMethod(new Orders(), Orders.class.getDeclaredMethod("create"));
		}
		catch (NoSuchMethodException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static class Orders {

		@Idempotent
		Mono<String> create() {
			return Mono.just("created");
		}

	}

}
