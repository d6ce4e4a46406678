package dev.idempo.autoconfigure;

import reactor.core.publisher.Mono;

import dev.idempo.autoconfigure.store.redis.RedisStoreConfiguration;
import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.LockingStore;
import dev.idempo.store.OffloadedLockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The non-blocking store of reactive request flows, unless the application defines its
 * own {@link ReactiveLockingStore}. Imported last by
 * {@link IdempotencyAutoConfiguration}, after the store configurations whose
 * store-specific reactive store it serves.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Mono.class)
class ReactiveStoreConfiguration {

	/**
	 * The store-specific reactive store if a store configuration made one (Redis over a
	 * reactive connection factory), else the in-memory store on the subscriber's thread
	 * (it never waits), else the application's store on Reactor's bounded elastic
	 * scheduler.
	 */
	@Bean(destroyMethod = "")
	@ConditionalOnMissingBean(ReactiveLockingStore.class)
	ReactiveLockingStore idempotencyReactiveLockingStore(LockingStore lockingStore,
			@Qualifier(RedisStoreConfiguration.REACTIVE_STORE_BEAN_NAME) ObjectProvider<ReactiveLockingStore> storeSpecific) {
		ReactiveLockingStore reactive = storeSpecific.getIfAvailable();
		if (reactive != null) {
			return reactive;
		}
		return (lockingStore instanceof InMemoryLockingStore) ? new InlineLockingStore(lockingStore)
				: new OffloadedLockingStore(lockingStore);
	}

}
