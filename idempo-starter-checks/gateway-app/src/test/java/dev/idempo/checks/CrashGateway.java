package dev.idempo.checks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.idempo.core.StorageKeys;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.testsupport.ApplicationProcess;
import dev.idempo.testsupport.BlockHoundExtension;
import dev.idempo.webflux.DefaultReactiveCallerScopeResolver;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.env.Environment;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.util.Assert;
import org.springframework.web.server.ServerWebExchange;

/**
 * The gateway of {@link GatewayCrashTests}: Spring Cloud Gateway (server-webflux) with
 * the idempo starter, run as a JVM of its own ({@link ApplicationProcess}) so that the
 * test can kill it with SIGKILL, where nothing of the gateway runs any more. It installs
 * BlockHound (idempo-core's test allowances, Lettuce's included) before anything else, so
 * a blocking call on an event loop fails the request.
 * <p>
 * The request header {@value #PAUSE_HEADER} (removed before anything else sees the
 * request) holds a request forever at a point of its life, after creating the file
 * {@code <gateway-crash.signal-dir>/<point>-<Idempotency-Key>} so that the test knows it
 * is there:
 * <ul>
 * <li>{@value #BEFORE_STORE}: the backend has answered and the filter calls the store's
 * {@code complete}, which never runs; meanwhile the lease is renewed every third of
 * {@code idempo.lock-ttl}, as the filter renewed it while the backend worked, so that at
 * the kill the key is held exactly as at a crash in that instant (the SIGKILL ends the
 * renewals);</li>
 * <li>{@value #AFTER_STORE}: the store's {@code complete} has stored the response, which
 * never reaches the client (the file holds whether it was stored);</li>
 * <li>{@value #BEFORE_RESPONSE}: the backend has answered and the gateway is about to
 * write its response to the client, which it never does (any route, with or without the
 * filter).</li>
 * </ul>
 * Configuration, as command-line arguments: the routes, {@code idempo.*},
 * {@code spring.data.redis.*} and {@code gateway-crash.signal-dir}.
 *
 * @author idempo
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class CrashGateway {

	/** The request header that holds a request at a point. */
	static final String PAUSE_HEADER = "X-Crash-Pause";

	/** Held after the backend answered, before the store's {@code complete}. */
	static final String BEFORE_STORE = "before-store";

	/** Held after the store's {@code complete}, before the response is written. */
	static final String AFTER_STORE = "after-store";

	/** Held after the backend answered, before the gateway writes the response. */
	static final String BEFORE_RESPONSE = "before-response";

	/** The bean of the store that idempo's reactive request flow uses. */
	private static final String STORE_BEAN = "idempotencyReactiveLockingStore";

	private static final Pattern KEY = Pattern.compile("[A-Za-z0-9-]{1,64}");

	/**
	 * Runs the gateway.
	 * @param args the command-line arguments
	 */
	public static void main(String[] args) {
		// installs BlockHound before any Reactor or Netty thread starts, with the
		// tests' allowances (Lettuce's locks among them)
		new BlockHoundExtension();
		ApplicationProcess.run(CrashGateway.class, args);
	}

	@Bean
	static CrashPoints crashPoints(Environment environment) {
		return new CrashPoints(Path.of(environment.getRequiredProperty("gateway-crash.signal-dir")),
				DurationStyle.detectAndParse(environment.getRequiredProperty("idempo.lock-ttl")));
	}

	@Bean
	static BeanPostProcessor pausingStorePostProcessor(CrashPoints points) {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (STORE_BEAN.equals(beanName) && bean instanceof ReactiveLockingStore store) {
					points.storeWrapped = true;
					return new PausingStore(store, points);
				}
				return bean;
			}

		};
	}

	/** Refuses to start if the store was not wrapped: the pauses would never happen. */
	@Bean
	SmartInitializingSingleton pausingStoreCheck(CrashPoints points) {
		return () -> Assert.state(points.storeWrapped, "No ReactiveLockingStore bean named " + STORE_BEAN);
	}

	@Bean
	GlobalFilter crashPointFilter(CrashPoints points) {
		return new PauseFilter(points);
	}

	/** Where a request is to be held, and how the test learns that it is. */
	static final class CrashPoints {

		private final Map<String, Pause> byStorageKey = new ConcurrentHashMap<>();

		private final Path signals;

		private final Duration lockTtl;

		volatile boolean storeWrapped;

		CrashPoints(Path signals, Duration lockTtl) {
			this.signals = signals;
			this.lockTtl = lockTtl;
		}

		void register(Pause pause) {
			String storageKey = StorageKeys.of(DefaultReactiveCallerScopeResolver.ANONYMOUS, pause.key());
			this.byStorageKey.put(storageKey, pause);
		}

		@Nullable Pause take(String storageKey) {
			return this.byStorageKey.remove(storageKey);
		}

		/** Creates the signal file, off the event loop. */
		Mono<Void> signal(Pause pause, String content) {
			Path file = this.signals.resolve(pause.point() + "-" + pause.key());
			return Mono.fromRunnable(() -> {
				ApplicationProcess.writeAtomically(file, content);
				System.out.println("paused at " + pause.point() + " for " + pause.key());
			}).subscribeOn(Schedulers.boundedElastic()).then();
		}

	}

	/** A request to hold: the point and its {@code Idempotency-Key}. */
	record Pause(String point, String key) {

	}

	/**
	 * Reads and removes {@value #PAUSE_HEADER}, before every other filter: registers a
	 * store pause, or holds the response of a {@value #BEFORE_RESPONSE} pause.
	 */
	private record PauseFilter(CrashPoints points) implements GlobalFilter, Ordered {

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
			String point = exchange.getRequest().getHeaders().getFirst(PAUSE_HEADER);
			String key = exchange.getRequest().getHeaders().getFirst("Idempotency-Key");
			if (point == null || key == null || !KEY.matcher(key).matches()) {
				return chain.filter(exchange);
			}
			Pause pause = new Pause(point, key);
			ServerWebExchange.Builder mutated = exchange.mutate()
				.request((request) -> request.headers((headers) -> headers.remove(PAUSE_HEADER)));
			if (BEFORE_RESPONSE.equals(point)) {
				mutated.response(new HeldResponse(exchange, this.points, pause));
			}
			else {
				this.points.register(pause);
			}
			return chain.filter(mutated.build());
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

	}

	/** A response whose body is never written: the test kills the gateway meanwhile. */
	private static final class HeldResponse extends ServerHttpResponseDecorator {

		private final CrashPoints points;

		private final Pause pause;

		HeldResponse(ServerWebExchange exchange, CrashPoints points, Pause pause) {
			super(exchange.getResponse());
			this.points = points;
			this.pause = pause;
		}

		@Override
		public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
			return hold();
		}

		@Override
		public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
			return hold();
		}

		private Mono<Void> hold() {
			return this.points.signal(this.pause, String.valueOf(getStatusCode())).then(Mono.never());
		}

	}

	/**
	 * The store of idempo's request flow, which holds the completes of paused requests.
	 */
	private record PausingStore(ReactiveLockingStore delegate, CrashPoints points) implements ReactiveLockingStore {

		@Override
		public Mono<ClaimResult> claim(String key, Duration lockTtl) {
			return this.delegate.claim(key, lockTtl);
		}

		@Override
		public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
			Pause pause = this.points.take(lease.key());
			if (pause != null && BEFORE_STORE.equals(pause.point())) {
				Duration period = this.points.lockTtl.dividedBy(3);
				Flux<Boolean> renewals = Flux.interval(Duration.ZERO, period)
					.concatMap((tick) -> this.delegate.renew(lease, this.points.lockTtl));
				return this.points.signal(pause, "held").thenMany(renewals).then(Mono.never());
			}
			Mono<Boolean> complete = this.delegate.complete(lease, record, ttl);
			if (pause != null && AFTER_STORE.equals(pause.point())) {
				return complete
					.flatMap((stored) -> this.points.signal(pause, "stored=" + stored).then(Mono.<Boolean>never()));
			}
			return complete;
		}

		@Override
		public Mono<Boolean> release(Lease lease) {
			return this.delegate.release(lease);
		}

		@Override
		public Mono<Boolean> renew(Lease lease, Duration lockTtl) {
			return this.delegate.renew(lease, lockTtl);
		}

		@Override
		public boolean leaseExpires() {
			return this.delegate.leaseExpires();
		}

		@Override
		public String name() {
			return this.delegate.name();
		}

	}

}
