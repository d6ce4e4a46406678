package dev.idempo.sample;

import java.time.Clock;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A small payments API protected by idempo, with a scheduled settlement that runs at most
 * once per business date.
 *
 * @author idempo
 */
@SpringBootApplication
@EnableScheduling
public class SampleApplication {

	@Bean
	Clock clock() {
		return Clock.systemUTC();
	}

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
