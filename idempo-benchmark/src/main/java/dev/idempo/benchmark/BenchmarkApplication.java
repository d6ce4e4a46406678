package dev.idempo.benchmark;

import java.lang.reflect.Method;
import java.util.Set;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.web.server.context.WebServerPortFileWriter;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/**
 * The benchmark application. {@code benchmark/run.sh} starts it once per store with
 * {@code server.port=0} and {@code bench.port-file}, and reads the port from that file.
 * It is a Spring MVC application on Tomcat unless started with
 * {@code spring.main.web-application-type=reactive} ({@code run.sh --stack webflux}):
 * then the same controllers run on Spring WebFlux and Reactor Netty, protected by
 * idempo's {@code IdempotencyWebFilter}.
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

	/**
	 * What only the Spring MVC application has.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.SERVLET)
	static class ServletConfiguration {

		@Bean
		FilterRegistrationBean<InFlightFilter> benchmarkInFlightFilter(BenchmarkCounters counters) {
			FilterRegistrationBean<InFlightFilter> registration = new FilterRegistrationBean<>(
					new InFlightFilter(counters));
			// outermost, so a request counts until its last byte is written
			registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
			return registration;
		}

	}

	/**
	 * What only the WebFlux application has: the in-flight count as a web filter, and an
	 * executor for the handler methods that block (a JDBC insert, a held request, priming
	 * over HTTP), so that no event loop waits. The other handlers ({@code /plain},
	 * {@code /idem}) run where WebFlux invokes them.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.REACTIVE)
	static class ReactiveConfiguration implements WebFluxConfigurer {

		/** The blocking handler methods of {@link BenchmarkController}. */
		private static final Set<String> BLOCKING = Set.of("payPlain", "payIdem", "slowIdem");

		private final ThreadPoolTaskExecutor blocking = blockingExecutor();

		@Bean
		InFlightWebFilter benchmarkInFlightWebFilter(BenchmarkCounters counters) {
			return new InFlightWebFilter(counters);
		}

		@Bean
		ThreadPoolTaskExecutor benchmarkBlockingExecutor() {
			return this.blocking;
		}

		@Override
		public void configureBlockingExecution(BlockingExecutionConfigurer configurer) {
			configurer.setExecutor(this.blocking);
			configurer.setControllerMethodPredicate(ReactiveConfiguration::blocks);
		}

		static boolean blocks(HandlerMethod handler) {
			Method method = handler.getMethod();
			Class<?> type = method.getDeclaringClass();
			return type == BenchmarkControlController.class
					|| (type == BenchmarkController.class && BLOCKING.contains(method.getName()));
		}

		private static ThreadPoolTaskExecutor blockingExecutor() {
			// as many threads as the clients of a load run, priming and the held request
			// need at once, with room to spare (Tomcat's pool has up to 200)
			ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
			executor.setCorePoolSize(64);
			executor.setMaxPoolSize(64);
			executor.setThreadNamePrefix("bench-blocking-");
			executor.setWaitForTasksToCompleteOnShutdown(false);
			return executor;
		}

	}

}
