package dev.idempo.autoconfigure;

import reactor.core.publisher.Mono;

import dev.idempo.store.LockingStore;
import dev.idempo.store.OffloadedLockingStore;
import dev.idempo.store.ReactiveLockingStore;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The non-blocking store of reactive request flows when no store configuration defined
 * one of its own: the application's {@link LockingStore}, each call served on Reactor's
 * bounded elastic scheduler. Imported last by {@link IdempotencyAutoConfiguration}, so
 * that a store-specific {@link ReactiveLockingStore} defined before it wins.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Mono.class)
class ReactiveStoreConfiguration {

	@Bean
	@ConditionalOnMissingBean(ReactiveLockingStore.class)
	OffloadedLockingStore idempotencyReactiveLockingStore(LockingStore lockingStore) {
		return new OffloadedLockingStore(lockingStore);
	}

}
