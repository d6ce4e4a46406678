package dev.idempo.autoconfigure.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.store.LocallyCachedLockingStore;
import dev.idempo.core.MicrometerIdempotencyListener;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.store.redis.RedisLockingStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} for idempo's Micrometer meters.
 *
 * @author idempo
 */
@AutoConfiguration(before = IdempotencyAutoConfiguration.class, afterName = {
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
public final class IdempotencyMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	MicrometerIdempotencyListener micrometerIdempotencyListener(MeterRegistry registry) {
		return new MicrometerIdempotencyListener(registry);
	}

	/**
	 * The in-memory store's size and evictions, when it is the store.
	 * @param stores the in-memory store, if it is the one
	 * @return the binder
	 */
	@Bean
	MeterBinder idempotencyMemoryStoreMeters(ObjectProvider<InMemoryLockingStore> stores) {
		return (registry) -> stores.ifAvailable((store) -> {
			Gauge.builder("idempo.store.memory.entries", store, InMemoryLockingStore::size)
				.description("Completed records held by the in-memory idempotency store")
				.register(registry);
			Gauge.builder("idempo.store.memory.size", store, InMemoryLockingStore::sizeInBytes)
				.description("Bytes of completed records held by the in-memory idempotency store")
				.baseUnit("bytes")
				.register(registry);
			FunctionCounter.builder("idempo.store.memory.evictions", store, InMemoryLockingStore::capacityEvictions)
				.description("Records the in-memory store dropped: capacity (before they expired, re-opening "
						+ "their keys) or expired")
				.tag("reason", "capacity")
				.register(registry);
			FunctionCounter.builder("idempo.store.memory.evictions", store, InMemoryLockingStore::expiredEvictions)
				.description("Records the in-memory store dropped: capacity (before they expired, re-opening "
						+ "their keys) or expired")
				.tag("reason", "expired")
				.register(registry);
		});
	}

	/**
	 * The local replay cache's claims by result ({@code hit}: answered from the cache;
	 * {@code miss}: sent to the store) and its size, when it is enabled.
	 * @param caches the local cache, if enabled
	 * @return the binder
	 */
	@Bean
	MeterBinder idempotencyLocalCacheMeters(ObjectProvider<LocallyCachedLockingStore> caches) {
		return (registry) -> caches.ifAvailable((cache) -> {
			String description = "Claims the local replay cache answered (hit) or sent to the store (miss)";
			FunctionCounter.builder("idempo.local-cache.claims", cache, LocallyCachedLockingStore::hits)
				.description(description)
				.tag("store", cache.name())
				.tag("result", "hit")
				.register(registry);
			FunctionCounter.builder("idempo.local-cache.claims", cache, LocallyCachedLockingStore::misses)
				.description(description)
				.tag("store", cache.name())
				.tag("result", "miss")
				.register(registry);
			Gauge.builder("idempo.local-cache.entries", cache, LocallyCachedLockingStore::size)
				.description("Completed records held by the local replay cache")
				.tag("store", cache.name())
				.register(registry);
		});
	}

	/**
	 * Meters of the Redis store, apart so that Spring Data Redis is needed only when
	 * present.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RedisConnectionFactory.class)
	static class RedisStoreMeters {

		/**
		 * Replica acknowledgements of stored responses, when the Redis store is the store
		 * and waits for them.
		 * @param stores the Redis store, if it is the one
		 * @return the binder
		 */
		@Bean
		MeterBinder idempotencyRedisStoreMeters(ObjectProvider<RedisLockingStore> stores) {
			return (registry) -> stores.ifAvailable((store) -> {
				if (store.replicaAcknowledgements() == 0) {
					return;
				}
				String description = "Responses the Redis store stored and then waited for replicas to acknowledge: "
						+ "acknowledged in time, or missing (a failover may lose them)";
				FunctionCounter
					.builder("idempo.store.redis.replica.acknowledgements", store,
							RedisLockingStore::acknowledgedCompletes)
					.description(description)
					.tag("result", "acknowledged")
					.register(registry);
				FunctionCounter
					.builder("idempo.store.redis.replica.acknowledgements", store,
							RedisLockingStore::unacknowledgedCompletes)
					.description(description)
					.tag("result", "missing")
					.register(registry);
			});
		}

	}

}
