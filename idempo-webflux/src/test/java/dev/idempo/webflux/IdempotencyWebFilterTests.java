package dev.idempo.webflux;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencyListener.ResponseOutcome;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.core.IdempotencySettings;
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

import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.server.WebFilterChain;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter on the in-memory store, without a server: what becomes of a key when the
 * client goes away, and that a replay is the stored response.
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
