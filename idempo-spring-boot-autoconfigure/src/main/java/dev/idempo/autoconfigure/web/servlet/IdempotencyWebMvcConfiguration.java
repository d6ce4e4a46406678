package dev.idempo.autoconfigure.web.servlet;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.DispatcherType;
import org.jspecify.annotations.Nullable;

import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.autoconfigure.IdempotentRoutes;
import dev.idempo.autoconfigure.store.jdbc.JdbcStoreConfiguration;
import dev.idempo.core.CompositeIdempotencyListener;
import dev.idempo.core.FingerprintStrategy;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.core.ProblemCustomizer;
import dev.idempo.core.StoredResponseFilter;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.store.LockingStore;
import dev.idempo.transaction.TransactionalClaims;
import dev.idempo.web.BufferBudget;
import dev.idempo.web.CallerScopeResolver;
import dev.idempo.web.DefaultCallerScopeResolver;
import dev.idempo.web.IdempotencyAsyncInterceptor;
import dev.idempo.web.IdempotencyExceptionResolver;
import dev.idempo.web.IdempotencyFilter;
import dev.idempo.web.IdempotencyInterceptor;
import dev.idempo.web.IdempotencyProblemCustomizer;
import dev.idempo.web.IdempotencyRequestListener;
import dev.idempo.web.IdempotencyResponseBodyAdvice;
import dev.idempo.web.IdempotentHandlers;
import dev.idempo.web.IdempotentResponseFilter;
import dev.idempo.web.RequestFingerprintStrategy;
import dev.idempo.web.StreamingReturnValueHandler;
import dev.idempo.web.TransactionalIdempotency;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletListenerRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.AsyncSupportConfigurer;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import static dev.idempo.autoconfigure.IdempotencyAutoConfiguration.transactionalUnavailable;

/**
 * The request flow of {@code @Idempotent} Spring MVC handlers, in servlet web
 * applications only.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
public final class IdempotencyWebMvcConfiguration {

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
	 * duration or placeholder fails the application rather than its first request, and
	 * warns about annotated handlers that only safe methods reach.
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
