package dev.idempo.benchmark;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.server.context.WebServerPortFileWriter;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;

/**
 * The benchmark application. {@code benchmark/run.sh} starts it once per store with
 * {@code server.port=0} and {@code bench.port-file}, and reads the port from that file.
 *
 * @author idempo
 */
@SpringBootApplication
public class BenchmarkApplication {

	public static void main(String[] args) {
		SpringApplication.run(BenchmarkApplication.class, args);
	}

	@Bean
	@ConditionalOnProperty("bench.port-file")
	WebServerPortFileWriter benchmarkPortFileWriter(@Value("${bench.port-file}") String file) {
		return new WebServerPortFileWriter(file);
	}

	@Bean
	FilterRegistrationBean<InFlightFilter> benchmarkInFlightFilter(BenchmarkCounters counters) {
		FilterRegistrationBean<InFlightFilter> registration = new FilterRegistrationBean<>(
				new InFlightFilter(counters));
		// outermost, so a request counts until its last byte is written
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
		return registration;
	}

}
