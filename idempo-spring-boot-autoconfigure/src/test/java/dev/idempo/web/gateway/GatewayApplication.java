package dev.idempo.web.gateway;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A gateway and nothing else: its one route (configured by the test's
 * {@code spring.cloud.gateway.server.webmvc.routes}) proxies to a backend.
 *
 * @author idempo
 */
@SpringBootApplication
public class GatewayApplication {

	/** The requests that reached the gateway, counted before anything else runs. */
	private final AtomicInteger arrived = new AtomicInteger();

	@Bean
	SecurityFilterChain gatewaySecurity(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	FilterRegistrationBean<OncePerRequestFilter> arrivals() {
		FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(
				new OncePerRequestFilter() {

					@Override
					protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
							FilterChain chain) throws ServletException, IOException {
						GatewayApplication.this.arrived.incrementAndGet();
						chain.doFilter(request, response);
					}

				});
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
		return registration;
	}

	/**
	 * How many requests reached the gateway.
	 * @return the count
	 */
	public int arrived() {
		return this.arrived.get();
	}

}
