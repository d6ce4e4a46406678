package dev.idempo.autoconfigure.client;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.idempo.client.IdempotencyClientInterceptor;
import dev.idempo.client.IdempotencyClientListener;
import dev.idempo.client.IdempotencyExchangeFilterFunction;
import dev.idempo.client.MicrometerIdempotencyClientListener;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of idempo's client interceptor and filter, when
 * {@code idempo.client.enabled=true}: the interceptor a bean, and on Spring Boot's
 * {@code RestClient.Builder} and {@code RestTemplateBuilder} the first of their
 * interceptors; with Spring WebFlux, the {@code WebClient} filter a bean too, with the
 * same settings and listeners, and on Spring Boot's {@code WebClient.Builder} the first
 * of its filters. Needs no web server and no store.
 *
 * @author idempo
 */
@AutoConfiguration(afterName = {
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(ClientHttpRequestInterceptor.class)
@ConditionalOnBooleanProperty("idempo.client.enabled")
@EnableConfigurationProperties(IdempotencyClientProperties.class)
public final class IdempotencyClientAutoConfiguration {

	private static final Log logger = LogFactory.getLog(IdempotencyClientAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean
	IdempotencyClientInterceptor idempotencyClientInterceptor(IdempotencyClientProperties properties,
			ObjectProvider<IdempotencyClientListener> listeners) {
		return new IdempotencyClientInterceptor(properties.toSettings(), composite(listeners));
	}

	private static IdempotencyClientListener composite(ObjectProvider<IdempotencyClientListener> listeners) {
		return composite(listeners.orderedStream().toList());
	}

	private static IdempotencyClientListener composite(List<IdempotencyClientListener> listeners) {
		if (listeners.isEmpty()) {
			return IdempotencyClientListener.NONE;
		}
		if (listeners.size() == 1) {
			return listeners.get(0);
		}
		return new IdempotencyClientListener() {

			// each on its own, so that one that fails does not keep the others uninformed

			@Override
			public void onAttempt(String method, AttemptOutcome outcome) {
				listeners.forEach((listener) -> safely(() -> listener.onAttempt(method, outcome)));
			}

			@Override
			public void onRetry(String method, dev.idempo.client.RetryReason reason) {
				listeners.forEach((listener) -> safely(() -> listener.onRetry(method, reason)));
			}

		};
	}

	private static void safely(Runnable notification) {
		try {
			notification.run();
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency client listener failed", ex);
		}
	}

	/**
	 * On Spring Boot's client builders, apart so that the interceptor bean is there
	 * without {@code spring-boot-restclient}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RestClientCustomizer.class)
	static class BuilderConfiguration {

		/**
		 * Puts the interceptor first on every {@code RestClient.Builder} that Spring Boot
		 * hands out. Ordered last among customizers, so that an interceptor another
		 * customizer inserts at the front still runs inside it, on every attempt.
		 * @param interceptor the interceptor
		 * @return the customizer
		 */
		@Bean
		@Order(Ordered.LOWEST_PRECEDENCE)
		RestClientCustomizer idempotencyRestClientCustomizer(IdempotencyClientInterceptor interceptor) {
			return (builder) -> builder.requestInterceptors((interceptors) -> {
				interceptors.remove(interceptor);
				interceptors.add(0, interceptor);
			});
		}

		/**
		 * Puts the interceptor first on every {@code RestTemplate} built by Spring Boot's
		 * {@code RestTemplateBuilder}.
		 * @param interceptor the interceptor
		 * @return the customizer
		 */
		@Bean
		@Order(Ordered.LOWEST_PRECEDENCE)
		RestTemplateCustomizer idempotencyRestTemplateCustomizer(IdempotencyClientInterceptor interceptor) {
			return (restTemplate) -> {
				restTemplate.getInterceptors().remove(interceptor);
				restTemplate.getInterceptors().add(0, interceptor);
			};
		}

	}

	/**
	 * The filter for {@code WebClient}, when Spring WebFlux is there; apart so that the
	 * filter bean is there without {@code spring-boot-webclient}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(ExchangeFilterFunction.class)
	static class ReactiveConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyExchangeFilterFunction idempotencyExchangeFilterFunction(IdempotencyClientProperties properties,
				ObjectProvider<IdempotencyClientListener> listeners) {
			return new IdempotencyExchangeFilterFunction(properties.toSettings(), composite(listeners));
		}

		/**
		 * On Spring Boot's {@code WebClient.Builder}.
		 */
		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(WebClientCustomizer.class)
		static class WebClientBuilderConfiguration {

			/**
			 * Puts the filter first on every {@code WebClient.Builder} that Spring Boot
			 * hands out. Ordered last among customizers, so that a filter another
			 * customizer inserts at the front still runs inside it, on every attempt.
			 * @param filter the filter
			 * @return the customizer
			 */
			@Bean
			@Order(Ordered.LOWEST_PRECEDENCE)
			WebClientCustomizer idempotencyWebClientCustomizer(IdempotencyExchangeFilterFunction filter) {
				return (builder) -> builder.filters((filters) -> {
					filters.remove(filter);
					filters.add(0, filter);
				});
			}

		}

	}

	/**
	 * The client's meters, when Micrometer has a registry.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnBean(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		MicrometerIdempotencyClientListener micrometerIdempotencyClientListener(MeterRegistry registry) {
			return new MicrometerIdempotencyClientListener(registry);
		}

	}

}
