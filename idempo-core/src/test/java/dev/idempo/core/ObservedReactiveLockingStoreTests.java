package dev.idempo.core;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import dev.idempo.core.IdempotencyListener.StoreOperation;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.Lease;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.memory.InMemoryLockingStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link ObservedReactiveLockingStore}, over the in-memory store run inline.
 *
 * @author idempo
 */
class ObservedReactiveLockingStoreTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final List<String> reported = new CopyOnWriteArrayList<>();

	private final IdempotencyListener listener = new IdempotencyListener() {

		@Override
		public void onStoreOperation(String store, StoreOperation operation, long nanos, boolean success) {
			assertThat(nanos).isNotNegative();
			ObservedReactiveLockingStoreTests.this.reported.add(store + " " + operation + " " + success);
		}

	};

	private final InlineLockingStore memory = new InlineLockingStore(
			new InMemoryLockingStore(Clock.systemUTC(), 100, 1024 * 1024));

	@Test
	void everyOperationIsReportedWhenItEnds() {
		ObservedReactiveLockingStore store = new ObservedReactiveLockingStore(this.memory, this.listener);
		Mono<ClaimResult> claim = store.claim("ab01", Duration.ofSeconds(30));
		assertThat(this.reported).as("nothing before subscription").isEmpty();
		Lease lease = ((ClaimResult.Acquired) claim.block(TIMEOUT)).lease();
		assertThat(store.renew(lease, Duration.ofSeconds(30)).block(TIMEOUT)).isTrue();
		assertThat(store
			.complete(lease, new StoredRecord("fp", "x".getBytes(StandardCharsets.UTF_8)), Duration.ofMinutes(1))
			.block(TIMEOUT)).isTrue();
		assertThat(store.release(lease).block(TIMEOUT)).isFalse();
		assertThat(this.reported).containsExactly("memory CLAIM true", "memory RENEW true", "memory COMPLETE true",
				"memory RELEASE true");
		assertThat(store.name()).isEqualTo("memory");
	}

	@Test
	void aFailureIsReportedAsOne() {
		ReactiveLockingStore failing = new ReactiveLockingStore() {

			@Override
			public Mono<ClaimResult> claim(String key, Duration lockTtl) {
				return Mono.error(new LockingStoreException("down"));
			}

			@Override
			public Mono<Boolean> complete(Lease lease, StoredRecord record, Duration ttl) {
				return Mono.error(new LockingStoreException("down"));
			}

			@Override
			public Mono<Boolean> release(Lease lease) {
				return Mono.error(new LockingStoreException("down"));
			}

			@Override
			public String name() {
				return "down";
			}

		};
		ObservedReactiveLockingStore store = new ObservedReactiveLockingStore(failing, this.listener);
		assertThatExceptionOfType(LockingStoreException.class)
			.isThrownBy(() -> store.claim("ab02", Duration.ofSeconds(30)).block(TIMEOUT));
		assertThat(this.reported).containsExactly("down CLAIM false");
	}

	@Test
	void operationsAreObservedWhenGivenARegistry() {
		List<String> observed = new CopyOnWriteArrayList<>();
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStop(Observation.Context context) {
				observed.add(context.getName() + " " + context.getLowCardinalityKeyValue("operation").getValue());
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
		ObservedReactiveLockingStore store = new ObservedReactiveLockingStore(this.memory, this.listener, registry);
		Lease lease = ((ClaimResult.Acquired) store.claim("ab03", Duration.ofSeconds(30)).block(TIMEOUT)).lease();
		assertThat(store.release(lease).block(TIMEOUT)).isTrue();
		assertThat(observed).containsExactly("idempo.store claim", "idempo.store release");
	}

}
