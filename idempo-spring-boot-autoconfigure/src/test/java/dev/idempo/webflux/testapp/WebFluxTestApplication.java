package dev.idempo.webflux.testapp;

import dev.idempo.store.ReactiveLockingStore;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * A WebFlux application with annotated handlers ({@link ReactiveTestController}), run on
 * Reactor Netty by the WebFlux HTTP contract.
 *
 * @author idempo
 */
@SpringBootApplication
public class WebFluxTestApplication {

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
			.csrf((csrf) -> csrf.disable())
			.httpBasic(Customizer.withDefaults())
			.build();
	}

	@Bean
	MapReactiveUserDetailsService users() {
		return new MapReactiveUserDetailsService(
				User.withUsername("alice").password("{noop}secret").roles("USER").build(),
				User.withUsername("bob").password("{noop}secret").roles("USER").build());
	}

	@Bean
	ReactiveExecutions reactiveExecutions() {
		return new ReactiveExecutions();
	}

	/**
	 * Puts the auto-configured reactive store behind a switch that can take it down.
	 * @return the post-processor
	 */
	@Bean
	static BeanPostProcessor switchableReactiveStore() {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				return (bean instanceof ReactiveLockingStore store
						&& beanName.equals("idempotencyReactiveLockingStore")) ? new SwitchableReactiveStore(store)
								: bean;
			}

		};
	}

}
