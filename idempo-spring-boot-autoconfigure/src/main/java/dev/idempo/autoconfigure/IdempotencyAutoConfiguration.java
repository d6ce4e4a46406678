package dev.idempo.autoconfigure;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.DispatcherType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempo.core.CompositeIdempotencyListener;
import dev.idempo.core.FingerprintStrategy;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.core.LocallyCachedLockingStore;
import dev.idempo.core.ObservedLockingStore;
import dev.idempo.core.ObservedReactiveLockingStore;
import dev.idempo.core.ProblemCustomizer;
import dev.idempo.core.StoredResponseFilter;
import dev.idempo.store.LockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.web.BufferBudget;
import dev.idempo.web.CallerScopeResolver;
import dev.idempo.web.DefaultCallerScopeResolver;
import dev.idempo.web.IdempotencyAsyncInterceptor;
import dev.idempo.web.IdempotencyExceptionResolver;
import dev.idempo.web.IdempotencyFilter;
import dev.idempo.web.IdempotencyInterceptor;
import dev.idempo.web.IdempotencyRequestListener;
import dev.idempo.web.IdempotencyResponseBodyAdvice;
import dev.idempo.web.IdempotencyProblemCustomizer;
import dev.idempo.web.IdempotentHandlers;
import dev.idempo.web.IdempotentResponseFilter;
import dev.idempo.web.RequestFingerprintStrategy;
import dev.idempo.web.StreamingReturnValueHandler;
import dev.idempo.web.TransactionalIdempotency;
import dev.idempo.transaction.TransactionalClaims;
import dev.idempo.webflux.DefaultReactiveCallerScopeResolver;
import dev.idempo.webflux.IdempotencyGatewayFilterFactory;
import dev.idempo.webflux.IdempotencyRoutesGlobalFilter;
import dev.idempo.webflux.IdempotencyWebExceptionHandler;
import dev.idempo.webflux.IdempotencyWebFilter;
import dev.idempo.webflux.IdempotentHandlerPolicies;
import dev.idempo.webflux.ReactiveCallerScopeResolver;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletListenerRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Primary;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.AsyncSupportConfigurer;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} for idempotency keys: the store, in every application; on Spring
 * MVC handlers annotated with {@link Idempotent} (and the routes of
 * {@code idempo.routes}) in a servlet web application, and on annotated WebFlux handlers
 * (and {@code idempo.routes}) in a reactive one; on bean methods annotated with
 * {@code @Idempotent(key = ...)} and the {@code IdempotencyTemplate}
 * ({@link IdempotentMethodsConfiguration}) with or without a web server.
 *
 * @author idempo
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "idempo.enabled", matchIfMissing = true)
@EnableConfigurationProperties({ IdempotencyProperties.class, IdempotencyMemoryStoreProperties.class,
		IdempotencyRedisStoreProperties.class, IdempotencyLocalCacheProperties.class })
@Import({ IdempotencyAutoConfiguration.MemoryStoreConfiguration.class, RedisStoreConfiguration.class,
		JdbcStoreConfiguration.class, IdempotentMethodsConfiguration.class,
		IdempotencyAutoConfiguration.WebMvcConfiguration.class, IdempotencyAutoConfiguration.WebFluxConfiguration.class,
		ReactiveStoreConfiguration.class })
@ImportRuntimeHints(IdempotencyRuntimeHints.class)
public final class IdempotencyAutoConfiguration {

	/** The name of the local replay cache's bean, the primary store when enabled. */
	static final String LOCAL_CACHE_BEAN_NAME = "idempotencyLocalCache";

	private static final Log logger = LogFactory.getLog(IdempotencyAutoConfiguration.class);

	/**
	 * Reached only when no store configuration matched: fails start-up with an action
	 * (see {@link IdempotencyFailureAnalyzer}). Bean methods of this class are registered
	 * after those of the imported store configurations, so this sees their stores.
	 * @param properties the properties
	 * @return never returns
	 */
	@Bean
	@ConditionalOnMissingBean(LockingStore.class)
	LockingStore idempotencyUnavailableLockingStore(IdempotencyProperties properties) {
		StoreType type = properties.getStore().getType();
		String name = type.name().toLowerCase(java.util.Locale.ROOT);
		if (type == StoreType.REDIS) {
			// RedisStoreConfiguration creates the store whenever Spring Data Redis is
			// present
			throw new IdempotencyStoreUnavailableException(type,
					"Spring Data Redis (org.springframework.data.redis.connection.RedisConnectionFactory) "
							+ "is not on the classpath.",
					"Add org.springframework.boot:spring-boot-starter-data-redis to your dependencies and "
							+ "configure spring.data.redis.*, or set idempo.store.type to another store.");
		}
		if (type == StoreType.POSTGRES || type == StoreType.MYSQL) {
			String driver = (type == StoreType.POSTGRES) ? "org.postgresql:postgresql"
					: "org.mariadb.jdbc:mariadb-java-client or com.mysql:mysql-connector-j";
			throw new IdempotencyStoreUnavailableException(type,
					"the " + name + " store needs Spring JDBC (spring-jdbc and spring-boot-jdbc), "
							+ "which is not on the class path.",
					"Add org.springframework.boot:spring-boot-starter-jdbc and the JDBC driver (" + driver
							+ "), or set idempo.store.type=memory, or declare your own "
							+ "dev.idempo.store.LockingStore bean.");
		}
		throw new IdempotencyStoreUnavailableException(type,
				"the " + name + " store is not available in this version of idempo.",
				"Set idempo.store.type=memory, or declare your own dev.idempo.store.LockingStore bean.");
	}

	/**
	 * The local replay cache in front of whichever store is configured, when
	 * {@code idempo.local-cache.enabled}: the primary {@link LockingStore}, so that the
	 * web flow, idempotent methods, the template and the endpoint all go through it.
	 * Declared after {@link #idempotencyUnavailableLockingStore}, so that its bean is not
	 * taken for a store.
	 * @param properties the cache's properties
	 * @param beanFactory where the store is found
	 * @return the store with its cache
	 */
	@Bean(LOCAL_CACHE_BEAN_NAME)
	@Primary
	@ConditionalOnBooleanProperty("idempo.local-cache.enabled")
	LocallyCachedLockingStore idempotencyLocalCache(IdempotencyLocalCacheProperties properties,
			ConfigurableListableBeanFactory beanFactory) {
		if (!ClassUtils.isPresent("com.github.benmanes.caffeine.cache.Caffeine", beanFactory.getBeanClassLoader())) {
			throw new IllegalStateException("idempo.local-cache.enabled=true needs Caffeine: add "
					+ "com.github.ben-manes.caffeine:caffeine to your dependencies, or set idempo.local-cache.enabled=false");
		}
		List<String> stores = new ArrayList<>(
				List.of(beanFactory.getBeanNamesForType(LockingStore.class, true, false)));
		stores.remove(LOCAL_CACHE_BEAN_NAME);
		if (stores.size() != 1) {
			throw new IllegalStateException("idempo.local-cache.enabled=true needs exactly one other "
					+ "dev.idempo.store.LockingStore bean to put the cache in front of, but found " + stores);
		}
		return new LocallyCachedLockingStore(beanFactory.getBean(stores.get(0), LockingStore.class),
				properties.getMaximumSize(), properties.getMaxAge(), Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	LeaseRenewer idempotencyLeaseRenewer() {
		return new LeaseRenewer();
	}

	/**
	 * Why transactional handlers and methods cannot run, {@code null} if they can. Looked
	 * up by bean name, so that applications without spring-tx never load its classes.
	 */
	static @Nullable String transactionalUnavailable(IdempotencyProperties properties,
			ConfigurableBeanFactory beanFactory) {
		StoreType type = properties.getStore().getType();
		if (type != StoreType.POSTGRES && type != StoreType.MYSQL) {
			return "idempo.store.type is " + type.name().toLowerCase(java.util.Locale.ROOT);
		}
		if (!beanFactory.containsBean(JdbcStoreConfiguration.TRANSACTIONAL_BEAN_NAME)) {
			return "Spring's transaction support (spring-tx) or Spring JDBC is not on the class path";
		}
		return null;
	}

	/**
	 * The request flow of {@code @Idempotent} Spring MVC handlers, in servlet web
	 * applications only.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass(DispatcherServlet.class)
	static class WebMvcConfiguration {

		@Bean
		@ConditionalOnMissingBean
		CallerScopeResolver idempotencyCallerScopeResolver() {
			return new DefaultCallerScopeResolver();
		}

		@Bean
		@ConditionalOnMissingBean
		IdempotentHandlers idempotentHandlers(IdempotencyProperties properties, ConfigurableBeanFactory beanFactory) {
			IdempotentHandlers handlers = new IdempotentHandlers(new EmbeddedValueResolver(beanFactory),
					properties.getResponseTtl(), properties.isTransactional(),
					transactionalUnavailable(properties, beanFactory), properties.getResponses().toPolicy(),
					properties.getFingerprint().toOptions());
			handlers.setRoutes(IdempotentRoutes.of(properties));
			return handlers;
		}

		@Bean
		@ConditionalOnMissingBean
		IdempotencyInterceptor idempotencyInterceptor(LockingStore store, IdempotentHandlers handlers,
				CallerScopeResolver callerScopeResolver, ObjectProvider<IdempotencyListener> listeners,
				IdempotencyProperties properties, LeaseRenewer leaseRenewer, ConfigurableBeanFactory beanFactory,
				ObjectProvider<ObservationRegistry> observationRegistry,
				ObjectProvider<RequestFingerprintStrategy> fingerprints,
				ObjectProvider<IdempotentResponseFilter> responseFilters,
				ObjectProvider<IdempotencyProblemCustomizer> problemCustomizers,
				ObjectProvider<FingerprintStrategy> neutralFingerprints,
				ObjectProvider<StoredResponseFilter> neutralResponseFilters,
				ObjectProvider<ProblemCustomizer> neutralProblemCustomizers) {
			IdempotencyInterceptor interceptor = new IdempotencyInterceptor(store, handlers, callerScopeResolver,
					CompositeIdempotencyListener.of(listeners.orderedStream().toList()), properties.toSettings(),
					leaseRenewer, transactional(beanFactory));
			observationRegistry.ifAvailable(interceptor::setObservationRegistry);
			// the servlet-typed hooks first, then the stack-neutral ones; a servlet-typed
			// strategy wins
			neutralFingerprints
				.ifAvailable((strategy) -> interceptor.setFingerprintStrategy(RequestFingerprintStrategy.of(strategy)));
			fingerprints.ifAvailable(interceptor::setFingerprintStrategy);
			interceptor.setResponseFilters(
					Stream
						.concat(responseFilters.orderedStream(),
								neutralResponseFilters.orderedStream().map(IdempotentResponseFilter::of))
						.toList());
			interceptor.setProblemCustomizers(
					Stream
						.concat(problemCustomizers.orderedStream(),
								neutralProblemCustomizers.orderedStream().map(IdempotencyProblemCustomizer::of))
						.toList());
			return interceptor;
		}

		/**
		 * Answers a key in progress or reused that an idempotent method threw through a
		 * handler, last among the exception resolvers: after the application's
		 * {@code @ExceptionHandler} methods.
		 */
		@Bean
		@ConditionalOnMissingBean
		IdempotencyExceptionResolver idempotencyExceptionResolver(IdempotencyProperties properties,
				ObjectProvider<IdempotencyProblemCustomizer> problemCustomizers,
				ObjectProvider<ProblemCustomizer> neutralProblemCustomizers) {
			return new IdempotencyExceptionResolver(properties.getConflict().getRetryAfter(),
					Stream
						.concat(problemCustomizers.orderedStream(),
								neutralProblemCustomizers.orderedStream().map(IdempotencyProblemCustomizer::of))
						.toList());
		}

		@Bean
		WebMvcConfigurer idempotencyWebMvcConfigurer(IdempotencyInterceptor interceptor) {
			IdempotencyAsyncInterceptor asyncInterceptor = new IdempotencyAsyncInterceptor();
			return new WebMvcConfigurer() {

				@Override
				public void addInterceptors(InterceptorRegistry registry) {
					// last, so that requests other interceptors reject never claim a key
					registry.addInterceptor(interceptor).order(Ordered.LOWEST_PRECEDENCE);
				}

				@Override
				public void configureAsyncSupport(AsyncSupportConfigurer configurer) {
					configurer.registerCallableInterceptors(asyncInterceptor);
					configurer.registerDeferredResultInterceptors(asyncInterceptor);
				}

			};
		}

		/**
		 * Lets idempo recognise streaming return values at run time.
		 * @return the post-processor
		 */
		@Bean
		static BeanPostProcessor idempotencyStreamingReturnValueHandlerPostProcessor() {
			return new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					if (bean instanceof RequestMappingHandlerAdapter adapter) {
						StreamingReturnValueHandler.decorate(adapter);
					}
					return bean;
				}

			};
		}

		@Bean
		@ConditionalOnMissingBean(name = "idempotencyFilterRegistration")
		FilterRegistrationBean<IdempotencyFilter> idempotencyFilterRegistration(IdempotencyProperties properties) {
			List<String> keyHeaders = new ArrayList<>();
			keyHeaders.add(properties.getKeyHeader());
			keyHeaders.addAll(properties.getKeyHeaderAliases());
			FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(
					new IdempotencyFilter(keyHeaders, new BufferBudget(properties.maxBufferedBytes())));
			registration.setOrder(properties.getFilterOrder());
			registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC, DispatcherType.ERROR);
			registration.setAsyncSupported(true);
			return registration;
		}

		@Bean
		ServletListenerRegistrationBean<IdempotencyRequestListener> idempotencyRequestListener() {
			return new ServletListenerRegistrationBean<>(new IdempotencyRequestListener());
		}

		@Bean
		@ConditionalOnMissingBean
		IdempotencyResponseBodyAdvice idempotencyResponseBodyAdvice(IdempotencyProperties properties) {
			return new IdempotencyResponseBodyAdvice(properties.getMaxResponseSize().toBytes());
		}

		/**
		 * Resolves every {@code @Idempotent} handler's TTL at start-up, so that a bad
		 * duration or placeholder fails the application rather than its first request,
		 * and warns about annotated handlers that only safe methods reach.
		 */
		@Bean
		SmartInitializingSingleton idempotentHandlersValidator(IdempotentHandlers handlers,
				ObjectProvider<RequestMappingHandlerMapping> mappings, IdempotencyProperties properties,
				ConfigurableBeanFactory beanFactory) {
			return () -> {
				boolean anyTransactional = false;
				for (RequestMappingHandlerMapping mapping : mappings.orderedStream().toList()) {
					for (Map.Entry<RequestMappingInfo, HandlerMethod> entry : mapping.getHandlerMethods().entrySet()) {
						HandlerMethod handler = entry.getValue().createWithResolvedBean();
						IdempotentHandlers.Policy policy = handlers.policy(handler);
						anyTransactional |= policy != null && policy.transactional();
						handlers.warnIfOnlySafeMethods(handler, entry.getKey().getMethodsCondition().getMethods());
					}
				}
				if (anyTransactional) {
					JdbcStoreConfiguration.verifyTransactional(properties.getStore().getType(),
							(TransactionalClaims) beanFactory.getBean(JdbcStoreConfiguration.TRANSACTIONAL_BEAN_NAME));
				}
			};
		}

		private static @Nullable TransactionalIdempotency transactional(ConfigurableBeanFactory beanFactory) {
			return beanFactory.containsBean(JdbcStoreConfiguration.TRANSACTIONAL_BEAN_NAME)
					? new TransactionalIdempotency(
							(TransactionalClaims) beanFactory.getBean(JdbcStoreConfiguration.TRANSACTIONAL_BEAN_NAME))
					: null;
		}

	}

	/**
	 * The request flow of {@code @Idempotent} WebFlux handler methods, and of the
	 * functional endpoints, unannotated handler methods and gateway routes that
	 * {@code idempo.routes} protects, in reactive web applications only.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass({ IdempotencyWebFilter.class, DispatcherHandler.class })
	static class WebFluxConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ReactiveCallerScopeResolver idempotencyReactiveCallerScopeResolver() {
			return new DefaultReactiveCallerScopeResolver();
		}

		@Bean
		@ConditionalOnMissingBean
		IdempotentHandlerPolicies idempotentHandlerPolicies(IdempotencyProperties properties,
				ConfigurableBeanFactory beanFactory) {
			IdempotentHandlerPolicies policies = new IdempotentHandlerPolicies(new EmbeddedValueResolver(beanFactory),
					properties.getResponseTtl(), properties.isTransactional(), properties.getResponses().toPolicy(),
					properties.getFingerprint().toOptions());
			policies.setRoutes(IdempotentRoutes.of(properties));
			return policies;
		}

		/**
		 * The request flow, around the handlers of {@code @RequestMapping} methods and
		 * functional endpoints, looked up in the order the {@code DispatcherHandler} asks
		 * their mappings.
		 */
		@Bean
		@ConditionalOnMissingBean
		IdempotencyWebFilter idempotencyWebFilter(ReactiveLockingStore store, IdempotentHandlerPolicies policies,
				@Qualifier("requestMappingHandlerMapping") HandlerMapping handlerMapping,
				ObjectProvider<RouterFunctionMapping> routerFunctionMappings, ReactiveCallerScopeResolver callerScopes,
				ObjectProvider<IdempotencyListener> listeners, IdempotencyProperties properties,
				LeaseRenewer leaseRenewer, ObjectProvider<ObservationRegistry> observationRegistry,
				ObjectProvider<FingerprintStrategy> fingerprints, ObjectProvider<StoredResponseFilter> responseFilters,
				ObjectProvider<ProblemCustomizer> problemCustomizers) {
			IdempotencyListener listener = CompositeIdempotencyListener.of(listeners.orderedStream().toList());
			ObservationRegistry registry = observationRegistry.getIfAvailable(() -> ObservationRegistry.NOOP);
			// the store operations' latency and observations, as the servlet flow's
			ReactiveLockingStore observed = new ObservedReactiveLockingStore(store, listener, registry);
			List<HandlerMapping> mappings = new ArrayList<>();
			mappings.add(handlerMapping);
			routerFunctionMappings.orderedStream().forEach(mappings::add);
			AnnotationAwareOrderComparator.sort(mappings);
			IdempotencyWebFilter filter = new IdempotencyWebFilter(observed, policies, mappings, callerScopes, listener,
					properties.toSettings(), leaseRenewer);
			filter.setOrder(properties.getFilterOrder());
			filter.setObservationRegistry(registry);
			fingerprints.ifAvailable(filter::setFingerprintStrategy);
			filter.setResponseFilters(responseFilters.orderedStream().toList());
			filter.setProblemCustomizers(problemCustomizers.orderedStream().toList());
			return filter;
		}

		/**
		 * Answers a key in progress or reused that an idempotent method threw through a
		 * handler, after the application's {@code @ExceptionHandler} methods and before
		 * Spring Boot's error handler.
		 */
		@Bean
		@ConditionalOnMissingBean
		IdempotencyWebExceptionHandler idempotencyWebExceptionHandler(IdempotencyProperties properties,
				ObjectProvider<ProblemCustomizer> problemCustomizers) {
			IdempotencyWebExceptionHandler handler = new IdempotencyWebExceptionHandler(
					properties.getConflict().getRetryAfter());
			handler.setProblemCustomizers(problemCustomizers.orderedStream().toList());
			return handler;
		}

		/**
		 * The Spring Cloud Gateway route filter {@code Idempotency}
		 * ({@code filters: - Idempotency=24h,true}), and {@code idempo.routes} on gateway
		 * routes, where the gateway (server-webflux) is on the class path.
		 */
		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(name = "org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory")
		static class GatewayConfiguration {

			@Bean
			@ConditionalOnMissingBean
			IdempotencyGatewayFilterFactory idempotencyGatewayFilterFactory(IdempotencyWebFilter filter,
					IdempotentHandlerPolicies policies) {
				return new IdempotencyGatewayFilterFactory(filter, policies);
			}

			@Bean
			@ConditionalOnMissingBean
			IdempotencyRoutesGlobalFilter idempotencyRoutesGlobalFilter(IdempotencyWebFilter filter,
					IdempotentHandlerPolicies policies) {
				return new IdempotencyRoutesGlobalFilter(filter, policies);
			}

		}

		/**
		 * Resolves every {@code @Idempotent} handler's policy at start-up, so that a bad
		 * TTL or a transactional handler fails the application rather than its first
		 * request.
		 */
		@Bean
		SmartInitializingSingleton idempotentWebFluxHandlersValidator(IdempotentHandlerPolicies policies,
				ObjectProvider<org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping> mappings) {
			return () -> mappings.orderedStream()
				.forEach((mapping) -> mapping.getHandlerMethods().values().forEach(policies::policy));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "idempo.store.type", havingValue = "memory", matchIfMissing = true)
	static class MemoryStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(LockingStore.class)
		InMemoryLockingStore idempotencyLockingStore(IdempotencyMemoryStoreProperties memory) {
			logger.warn("idempo uses the in-memory store: idempotency keys are protected within this JVM only. "
					+ "Set idempo.store.type to redis, postgres or mysql when more than one instance serves requests.");
			return new InMemoryLockingStore(Clock.systemUTC(), memory.getMaxEntries(), memory.getMaxSize().toBytes(),
					memory.getWhenFull() == IdempotencyMemoryStoreProperties.WhenFull.REFUSE);
		}

	}

}
