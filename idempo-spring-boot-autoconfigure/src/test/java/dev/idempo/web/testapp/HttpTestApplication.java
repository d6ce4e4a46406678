package dev.idempo.web.testapp;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

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
