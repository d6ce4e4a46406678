package dev.idempo.autoconfigure.method;

import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.idempo.IdempotencyTemplate;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.autoconfigure.store.jdbc.JdbcStoreConfiguration;
import dev.idempo.core.CompositeIdempotencyListener;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.ObservedLockingStore;
import dev.idempo.core.ObservedReactiveLockingStore;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.method.IdempotentCalls;
import dev.idempo.method.IdempotentMethod;
import dev.idempo.method.IdempotentMethodAdvisor;
import dev.idempo.method.IdempotentMethodInterceptor;
import dev.idempo.method.IdempotentMethodRunner;
import dev.idempo.method.IdempotentMethods;
import dev.idempo.method.ReactiveIdempotentCalls;
import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.LockingStore;
import dev.idempo.store.OffloadedLockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.transaction.TransactionalClaims;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * {@code @Idempotent(key = ...)} on bean methods and the {@link IdempotencyTemplate}, in
 * every application (with or without a web server), when Jackson 3 is on the class path
 * (the starter brings it): results are stored as JSON through the application's
 * {@link JsonMapper}, or a default one if it has none.
 * <p>
 * The advisor and what it needs are infrastructure beans, created before the
 * application's own; they look up the store and everything else when the first call
 * arrives.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(JsonMapper.class)
@EnableConfigurationProperties(IdempotentMethodProperties.class)
@Import(IdempotentMethodsConfiguration.AutoProxyRegistrar.class)
public final class IdempotentMethodsConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static IdempotentMethods idempotentMethods() {
		return new IdempotentMethods();
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static IdempotentMethodAdvisor idempotentMethodAdvisor(IdempotentMethods methods,
			ObjectProvider<IdempotentMethodRunner> runner, Environment environment) {
		// read from the environment: properties beans are not bound this early
		int order = environment.getProperty("idempo.method.advisor-order", Integer.class,
				IdempotentMethodAdvisor.DEFAULT_ORDER);
		return new IdempotentMethodAdvisor(methods, new IdempotentMethodInterceptor(methods, runner::getObject), order);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentCalls idempotentCalls(LockingStore store, ObjectProvider<IdempotencyListener> listeners,
			IdempotencyProperties properties, LeaseRenewer leaseRenewer, ObjectProvider<JsonMapper> jsonMapper,
			ConfigurableBeanFactory beanFactory, ObjectProvider<ObservationRegistry> observationRegistry) {
		JsonMapper mapper = jsonMapper.getIfUnique(() -> JsonMapper.builder().build());
		IdempotentCalls calls = new IdempotentCalls(store,
				CompositeIdempotencyListener.of(listeners.orderedStream().toList()), properties.toSettings(),
				leaseRenewer, new dev.idempo.method.JsonResults(mapper), transactional(beanFactory));
		observationRegistry.ifAvailable(calls::setObservationRegistry);
		return calls;
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentMethodRunner idempotentMethodRunner(IdempotentCalls calls, IdempotencyProperties properties,
			IdempotentMethodProperties methodProperties, ConfigurableBeanFactory beanFactory,
			ObjectProvider<ReactiveIdempotentCalls> reactiveCalls) {
		IdempotentMethodRunner runner = new IdempotentMethodRunner(calls, beanFactory,
				new EmbeddedValueResolver(beanFactory), properties.getResponseTtl(), properties.isTransactional(),
				IdempotencyAutoConfiguration.transactionalUnavailable(properties, beanFactory),
				methodProperties.isVerifyArguments());
		runner.setReactiveCalls(reactiveCalls.getIfAvailable());
		return runner;
	}

	/**
	 * Methods returning {@code Mono} or {@code CompletableFuture}, where Reactor is on
	 * the class path: on the application's {@link ReactiveLockingStore}, observed, else
	 * on its {@link LockingStore}, observed, run on the caller's thread if it is the
	 * in-memory store and off it otherwise.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Mono.class)
	static class ReactiveMethodsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ReactiveIdempotentCalls reactiveIdempotentCalls(IdempotentCalls calls, LockingStore store,
				ObjectProvider<ReactiveLockingStore> reactiveStore, ObjectProvider<IdempotencyListener> listeners,
				IdempotencyProperties properties, ObjectProvider<ObservationRegistry> observationRegistry,
				LeaseRenewer leaseRenewer) {
			IdempotencyListener listener = CompositeIdempotencyListener.of(listeners.orderedStream().toList());
			ObservationRegistry registry = observationRegistry.getIfAvailable(() -> ObservationRegistry.NOOP);
			ReactiveLockingStore application = reactiveStore.getIfUnique();
			ReactiveLockingStore reactive = (application != null)
					? new ObservedReactiveLockingStore(application, listener, registry)
					: fallbackStore(new ObservedLockingStore(store, listener, registry), store);
			return new ReactiveIdempotentCalls(reactive, listener, properties.toSettings(), calls.results(),
					leaseRenewer);
		}

		/**
		 * The in-memory store never waits, so it runs on the subscriber's thread; any
		 * other store may block, so it runs off it. The blocking store is observed as the
		 * blocking path's is.
		 */
		private static ReactiveLockingStore fallbackStore(LockingStore observed, LockingStore store) {
			return (store instanceof InMemoryLockingStore) ? new InlineLockingStore(observed)
					: new OffloadedLockingStore(observed);
		}

	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyTemplate idempotencyTemplate(IdempotentCalls calls, IdempotencyProperties properties) {
		return new IdempotencyTemplate(calls, properties.getResponseTtl());
	}

	/**
	 * Resolves every idempotent method's settings at start-up (their key expressions and
	 * annotations were checked when their beans were proxied), so that a bad TTL or a
	 * transactional method without transactional mode fails the application rather than
	 * its first call.
	 */
	@Bean
	SmartInitializingSingleton idempotentMethodsValidator(IdempotentMethods methods,
			ObjectProvider<IdempotentMethodRunner> runner, IdempotencyProperties properties,
			ConfigurableBeanFactory beanFactory) {
		return () -> {
			boolean anyTransactional = false;
			for (IdempotentMethod method : methods.all()) {
				anyTransactional |= runner.getObject().policy(method).transactional();
			}
			if (anyTransactional) {
				JdbcStoreConfiguration.verifyTransactional(properties.getStore().getType(),
						(TransactionalClaims) beanFactory.getBean(JdbcStoreConfiguration.TRANSACTIONAL_BEAN_NAME));
			}
		};
	}

	private static @Nullable TransactionalClaims transactional(ConfigurableBeanFactory beanFactory) {
		return beanFactory.containsBean(JdbcStoreConfiguration.TRANSACTIONAL_BEAN_NAME)
				? (TransactionalClaims) beanFactory.getBean(JdbcStoreConfiguration.TRANSACTIONAL_BEAN_NAME) : null;
	}

	/**
	 * Makes sure an auto-proxy creator applies the advisor, as
	 * {@code @EnableTransactionManagement} does: Spring Boot registers one already unless
	 * {@code spring.aop.auto=false}.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}
