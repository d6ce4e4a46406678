package dev.idempo.autoconfigure.actuate;

import java.util.Arrays;
import java.util.List;

import dev.idempo.actuate.IdempotencyEndpoint;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.store.LockingStore;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * The {@code idempo} Actuator endpoint ({@link IdempotencyEndpoint}), when Actuator is on
 * the class path and the endpoint is available (exposed and accessible): in Spring MVC,
 * WebFlux and non-web applications alike.
 *
 * @author idempo
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(LockingStore.class)
@ConditionalOnAvailableEndpoint(IdempotencyEndpoint.class)
@EnableConfigurationProperties(IdempotencyEndpointProperties.class)
public final class IdempotencyEndpointAutoConfiguration {

	/**
	 * Each web flow's caller scope resolver type and idempo's default implementation of
	 * it, by name: a WebFlux or a non-web application may have neither the servlet API
	 * nor {@code idempo-webmvc}, nor Reactor nor {@code idempo-webflux}.
	 */
	private static final String[][] RESOLVERS = {
			{ "dev.idempo.web.CallerScopeResolver", "dev.idempo.web.DefaultCallerScopeResolver" },
			{ "dev.idempo.webflux.ReactiveCallerScopeResolver",
					"dev.idempo.webflux.DefaultReactiveCallerScopeResolver" } };

	@Bean
	@ConditionalOnMissingBean
	IdempotencyEndpoint idempotencyEndpoint(LockingStore store, IdempotencyEndpointProperties properties,
			ListableBeanFactory beanFactory) {
		return new IdempotencyEndpoint(store, defaultScopes(beanFactory), properties.isShowBody());
	}

	/**
	 * Whether the application's requests are scoped by idempo's default resolvers (or not
	 * at all: no web flow, no resolver), whose scopes the endpoint derives from a
	 * principal's name or an {@code Authorization} value. A subclass of a default may
	 * resolve differently, so only the class itself counts as the default.
	 * @param beanFactory the application's beans
	 * @return {@code false} if a web flow's resolver is the application's own
	 */
	static boolean defaultScopes(ListableBeanFactory beanFactory) {
		ClassLoader classLoader = IdempotencyEndpointAutoConfiguration.class.getClassLoader();
		for (String[] resolver : RESOLVERS) {
			if (!ClassUtils.isPresent(resolver[0], classLoader)) {
				continue;
			}
			Object unique = beanFactory.getBeanProvider(ClassUtils.resolveClassName(resolver[0], classLoader))
				.getIfUnique();
			if (unique != null && !unique.getClass().getName().equals(resolver[1])) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The names of the resolver types {@link #defaultScopes} looks up, for the runtime
	 * hints of a native image.
	 * @return the type names
	 */
	public static List<String> resolverTypes() {
		return Arrays.stream(RESOLVERS).map((resolver) -> resolver[0]).toList();
	}

}
