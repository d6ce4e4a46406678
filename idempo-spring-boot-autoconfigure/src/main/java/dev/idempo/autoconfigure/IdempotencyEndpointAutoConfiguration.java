package dev.idempo.autoconfigure;

import dev.idempo.actuate.IdempotencyEndpoint;
import dev.idempo.store.LockingStore;
import dev.idempo.web.CallerScopeResolver;
import dev.idempo.web.DefaultCallerScopeResolver;

import org.springframework.beans.factory.ObjectProvider;
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
	IdempotencyEndpoint idempotencyEndpoint(LockingStore store, ObjectProvider<CallerScopeResolver> callerScopeResolver,
			IdempotencyProperties properties) {
		return new IdempotencyEndpoint(store, callerScopeResolver.getIfUnique(DefaultCallerScopeResolver::new),
				properties.getEndpoint().isShowBody());
	}

}
