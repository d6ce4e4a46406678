package dev.idempo.autoconfigure.web.reactive;

import java.util.ArrayList;
import java.util.List;

import io.micrometer.observation.ObservationRegistry;

import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.autoconfigure.IdempotentRoutes;
import dev.idempo.core.CompositeIdempotencyListener;
import dev.idempo.core.FingerprintStrategy;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.ObservedReactiveLockingStore;
import dev.idempo.core.ProblemCustomizer;
import dev.idempo.core.StoredResponseFilter;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.store.ReactiveLockingStore;
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
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;

/**
 * The request flow of {@code @Idempotent} WebFlux handler methods, and of the functional
 * endpoints, unannotated handler methods and gateway routes that {@code idempo.routes}
 * protects, in reactive web applications only.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ IdempotencyWebFilter.class, DispatcherHandler.class })
public final class IdempotencyWebFluxConfiguration {

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
			ObjectProvider<IdempotencyListener> listeners, IdempotencyProperties properties, LeaseRenewer leaseRenewer,
			ObjectProvider<ObservationRegistry> observationRegistry, ObjectProvider<FingerprintStrategy> fingerprints,
			ObjectProvider<StoredResponseFilter> responseFilters,
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
		filter.setRequestBodyTimeout(properties.getRequestBodyTimeout());
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
	 * Resolves every {@code @Idempotent} handler's policy at start-up, so that a bad TTL
	 * or a transactional handler fails the application rather than its first request.
	 */
	@Bean
	SmartInitializingSingleton idempotentWebFluxHandlersValidator(IdempotentHandlerPolicies policies,
			ObjectProvider<org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping> mappings) {
		return () -> mappings.orderedStream()
			.forEach((mapping) -> mapping.getHandlerMethods().values().forEach(policies::policy));
	}

}
