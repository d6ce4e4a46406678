package dev.idempo.autoconfigure;

import dev.idempo.actuate.IdempotencyEndpoint;
import dev.idempo.store.LockingStore;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code idempo} Actuator endpoint ({@link IdempotencyEndpoint}), when Actuator is on
 * the class path and the endpoint is available (exposed and accessible).
 *
 * @author idempo
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(LockingStore.class)
@ConditionalOnAvailableEndpoint(IdempotencyEndpoint.class)
public final class IdempotencyEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyEndpoint idempotencyEndpoint(LockingStore store, IdempotencyProperties properties) {
		return new IdempotencyEndpoint(store, properties.getEndpoint().isShowBody());
	}

}
