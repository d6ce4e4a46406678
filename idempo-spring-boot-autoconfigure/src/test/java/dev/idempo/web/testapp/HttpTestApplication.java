package dev.idempo.web.testapp;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.ObjectPostProcessor;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.header.HeaderWriterFilter;

/**
 * A Spring MVC application with a handler for every style idempo must capture.
 *
 * @author idempo
 */
@SpringBootApplication
public class HttpTestApplication {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.httpBasic(Customizer.withDefaults())
			// Spring Security writes its headers on the way out of the filter chain by
			// default, on the request thread, while a StreamingResponseBody may already
			// be
			// committing the response on another (spring-security#15510: Tomcat's headers
			// then fail with a NullPointerException and the connection closes unanswered)
			.headers((headers) -> headers.withObjectPostProcessor(new ObjectPostProcessor<HeaderWriterFilter>() {

				@Override
				public <O extends HeaderWriterFilter> O postProcess(O filter) {
					filter.setShouldWriteHeadersEagerly(true);
					return filter;
				}

			}))
			.build();
	}

	@Bean
	InMemoryUserDetailsManager users() {
		return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}secret").roles("USER").build(),
				User.withUsername("bob").password("{noop}secret").roles("USER").build());
	}

	@Bean
	Executions executions() {
		return new Executions();
	}

}
