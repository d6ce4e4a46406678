package dev.idempo.autoconfigure.actuate;

import dev.idempo.actuate.IdempotencyStoreHealthIndicator;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.store.LockingStore;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The store's health as the health contributor {@code idempo}
 * ({@link IdempotencyStoreHealthIndicator}), when Spring Boot's health support is on the
 * class path. It is part of {@code /actuator/health}, not of the liveness or readiness
 * groups unless they include it: a store outage answers keyed requests 503, it does not
 * make the application dead.
 *
 * @author idempo
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LockingStore.class)
@ConditionalOnEnabledHealthIndicator("idempo")
public final class IdempotencyHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "idempoHealthIndicator")
	IdempotencyStoreHealthIndicator idempoHealthIndicator(LockingStore store) {
		return new IdempotencyStoreHealthIndicator(store);
	}

}
