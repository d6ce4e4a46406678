package dev.idempo.web.transactional.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Payments written by transactional handlers, through JDBC and (with {@code test.jpa})
 * JPA, into the table {@code test.payments-table}.
 */
@SpringBootApplication
public class TransactionalTestApplication {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	Pauses pauses() {
		return new Pauses();
	}

}
