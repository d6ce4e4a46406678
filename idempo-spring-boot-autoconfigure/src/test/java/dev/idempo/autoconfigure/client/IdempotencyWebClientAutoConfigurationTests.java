package dev.idempo.autoconfigure.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import dev.idempo.client.IdempotencyClientInterceptor;
import dev.idempo.client.IdempotencyClientSettings;
import dev.idempo.client.IdempotencyExchangeFilterFunction;
import dev.idempo.client.MicrometerIdempotencyClientListener;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.client.autoconfigure.reactive.ReactiveHttpClientAutoConfiguration;
import org.springframework.boot.http.codec.autoconfigure.CodecsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client's auto-configuration for {@code WebClient}: off by default; when on, the
 * filter first among the filters of Boot's {@code WebClient.Builder}, with the settings
 * and the meters of the {@code RestClient} side, and working over HTTP; replaceable; and
 * a bean without Boot's WebClient module.
 *
 * @author idempo
 */
class IdempotencyWebClientAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyClientAutoConfiguration.class, CodecsAutoConfiguration.class,
					ReactiveHttpClientAutoConfiguration.class, WebClientAutoConfiguration.class));

	@Test
	void offByDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyExchangeFilterFunction.class);
			assertThat(filters(context.getBean(WebClient.Builder.class))).isEmpty();
		});
	}

	@Test
	void whenEnabledItIsTheFirstFilterOfBootsBuilderOnceWhateverOtherCustomizersAdd() {
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.withUserConfiguration(OtherFilters.class)
			.run((context) -> {
				IdempotencyExchangeFilterFunction filter = context.getBean(IdempotencyExchangeFilterFunction.class);
				WebClient.Builder builder = context.getBean(WebClient.Builder.class);
				assertThat(filters(builder)).containsExactly(filter, OtherFilters.FRONT, OtherFilters.OTHER);
				WebClient.Builder clone = builder.clone().filter(OtherFilters.OTHER);
				context.getBeanProvider(WebClientCustomizer.class)
					.orderedStream()
					.forEach((customizer) -> customizer.customize(clone));
				assertThat(filters(clone)).first().isSameAs(filter);
				assertThat(filters(clone)).filteredOn((candidate) -> candidate == filter).hasSize(1);
			});
	}

	@Test
	void theFilterHasTheInterceptorsSettings() {
		this.runner
			.withPropertyValues("idempo.client.enabled=true", "idempo.client.methods=post,put",
					"idempo.client.key-header=X-Request-Key", "idempo.client.max-attempts=5",
					"idempo.client.backoff.initial=50ms", "idempo.client.max-retry-after=30s",
					"idempo.client.derived-keys=false")
			.run((context) -> {
				IdempotencyClientSettings settings = context.getBean(IdempotencyExchangeFilterFunction.class)
					.getSettings();
				assertThat(settings).isEqualTo(context.getBean(IdempotencyClientInterceptor.class).getSettings());
				assertThat(settings.keyHeader()).isEqualTo("X-Request-Key");
				assertThat(settings.maxAttempts()).isEqualTo(5);
				assertThat(settings.derivedKeys()).isFalse();
			});
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.run((context) -> assertThat(context.getBean(IdempotencyExchangeFilterFunction.class).getSettings())
				.isEqualTo(IdempotencyClientSettings.defaults()));
	}

	@Test
	void aWebClientFromBootsBuilderSendsTheConfiguredKeyHeaderRetriesAndCounts() throws IOException {
		List<String> keys = new CopyOnWriteArrayList<>();
		AtomicInteger answers = new AtomicInteger();
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		server.createContext("/charges", (exchange) -> {
			keys.add(String.valueOf(exchange.getRequestHeaders().getFirst("X-Request-Key")));
			exchange.getRequestBody().readAllBytes();
			boolean first = answers.getAndIncrement() == 0;
			if (first) {
				exchange.getResponseHeaders().add("Retry-After", "0");
			}
			byte[] body = (first ? "busy" : "charged").getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(first ? 503 : 201, body.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(body);
			}
		});
		server.start();
		try {
			this.runner.withPropertyValues("idempo.client.enabled=true", "idempo.client.key-header=X-Request-Key")
				.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
				.run((context) -> {
					WebClient client = context.getBean(WebClient.Builder.class)
						.baseUrl("http://127.0.0.1:" + server.getAddress().getPort())
						.build();
					String answer = client.post()
						.uri("/charges")
						.bodyValue("{}")
						.retrieve()
						.bodyToMono(String.class)
						.block(java.time.Duration.ofSeconds(20));
					assertThat(answer).isEqualTo("charged");
					assertThat(keys).hasSize(2);
					assertThat(keys.get(0)).matches("\"[A-Za-z0-9_-]{22}\"").isEqualTo(keys.get(1));
					assertThat(context.getBean(MeterRegistry.class)
						.get(MicrometerIdempotencyClientListener.RETRIES)
						.tags("method", "POST", "reason", "503")
						.counter()
						.count()).isEqualTo(1.0);
				});
		}
		finally {
			server.stop(0);
		}
	}

	@Test
	void aUsersFilterReplacesIdempos() {
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.withBean(IdempotencyExchangeFilterFunction.class,
					() -> new IdempotencyExchangeFilterFunction(
							IdempotencyClientSettings.defaults().withMaxAttempts(7)))
			.run((context) -> {
				IdempotencyExchangeFilterFunction filter = context.getBean(IdempotencyExchangeFilterFunction.class);
				assertThat(filter.getSettings().maxAttempts()).isEqualTo(7);
				assertThat(filters(context.getBean(WebClient.Builder.class))).containsExactly(filter);
			});
	}

	@Test
	void withoutBootsWebClientModuleTheFilterIsStillABean() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyClientAutoConfiguration.class))
			.withPropertyValues("idempo.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(WebClientCustomizer.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotencyExchangeFilterFunction.class)
				.doesNotHaveBean("idempotencyWebClientCustomizer"));
	}

	@Test
	void withoutWebFluxThereIsNoFilterAndTheInterceptorStays() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyClientAutoConfiguration.class))
			.withPropertyValues("idempo.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(ExchangeFilterFunction.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotencyClientInterceptor.class)
				.doesNotHaveBean(IdempotencyExchangeFilterFunction.class));
	}

	private static List<ExchangeFilterFunction> filters(WebClient.Builder builder) {
		List<ExchangeFilterFunction> filters = new ArrayList<>();
		builder.filters(filters::addAll);
		return filters;
	}

	@Configuration(proxyBeanMethods = false)
	static class OtherFilters {

		static final ExchangeFilterFunction OTHER = (request, next) -> next.exchange(request);

		static final ExchangeFilterFunction FRONT = (request, next) -> next.exchange(request);

		@Bean
		@Order(Ordered.HIGHEST_PRECEDENCE)
		WebClientCustomizer appendingCustomizer() {
			return (builder) -> builder.filter(OTHER);
		}

		@Bean
		@Order(0)
		WebClientCustomizer insertingCustomizer() {
			return (builder) -> builder.filters((filters) -> filters.add(0, FRONT));
		}

	}

}
