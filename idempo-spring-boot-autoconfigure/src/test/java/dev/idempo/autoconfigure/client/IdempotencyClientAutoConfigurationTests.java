package dev.idempo.autoconfigure.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Properties;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.idempo.client.IdempotencyClientInterceptor;
import dev.idempo.client.IdempotencyClientListener;
import dev.idempo.client.IdempotencyClientListener.AttemptOutcome;
import dev.idempo.client.IdempotencyClientSettings;
import dev.idempo.client.MicrometerIdempotencyClientListener;
import dev.idempo.client.RetryReason;

import org.springframework.beans.factory.config.YamlPropertiesFactoryBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client's auto-configuration: off by default, first among the interceptors of Boot's
 * builders when on, replaceable, metered, and refusing bad values at start-up.
 *
 * @author idempo
 */
class IdempotencyClientAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyClientAutoConfiguration.class, HttpClientAutoConfiguration.class,
					RestClientAutoConfiguration.class, RestTemplateAutoConfiguration.class));

	@Test
	void offByDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyClientInterceptor.class);
			assertThat(interceptors(context.getBean(RestClient.Builder.class))).isEmpty();
		});
	}

	@Test
	void whenEnabledItIsTheFirstInterceptorOfBootsBuildersWhateverOtherCustomizersAdd() {
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.withUserConfiguration(OtherInterceptors.class)
			.run((context) -> {
				IdempotencyClientInterceptor interceptor = context.getBean(IdempotencyClientInterceptor.class);
				List<ClientHttpRequestInterceptor> restClient = interceptors(context.getBean(RestClient.Builder.class));
				assertThat(restClient).hasSize(3).first().isSameAs(interceptor);
				RestTemplate restTemplate = context.getBean(RestTemplateBuilder.class)
					.additionalInterceptors(OtherInterceptors.OTHER)
					.build();
				assertThat(restTemplate.getInterceptors()).hasSize(2).first().isSameAs(interceptor);
			});
	}

	@Test
	void itStaysFirstAndSingleBehindAnUnorderedCustomizerAClonedBuilderAndASecondCustomization() {
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.withUserConfiguration(UnorderedInserting.class)
			.run((context) -> {
				IdempotencyClientInterceptor interceptor = context.getBean(IdempotencyClientInterceptor.class);
				RestClient.Builder builder = context.getBean(RestClient.Builder.class);
				assertThat(interceptors(builder)).containsExactly(interceptor, OtherInterceptors.FRONT);
				RestClient.Builder clone = builder.clone().requestInterceptor(OtherInterceptors.OTHER);
				context.getBeanProvider(RestClientCustomizer.class)
					.orderedStream()
					.forEach((customizer) -> customizer.customize(clone));
				assertThat(interceptors(clone)).first().isSameAs(interceptor);
				assertThat(interceptors(clone)).filteredOn((candidate) -> candidate == interceptor).hasSize(1);
				assertThat(interceptors(clone)).last().isSameAs(OtherInterceptors.OTHER);
			});
	}

	@Test
	void propertiesBecomeTheInterceptorsSettings() {
		this.runner
			.withPropertyValues("idempo.client.enabled=true", "idempo.client.methods=post,put",
					"idempo.client.key-header=X-Request-Key", "idempo.client.max-attempts=5",
					"idempo.client.backoff.initial=50ms", "idempo.client.backoff.max=2s",
					"idempo.client.backoff.multiplier=1.5", "idempo.client.backoff.jitter=0.25",
					"idempo.client.max-retry-after=30s", "idempo.client.derived-keys=false")
			.run((context) -> {
				IdempotencyClientSettings settings = context.getBean(IdempotencyClientInterceptor.class).getSettings();
				assertThat(settings.keyedMethods()).containsExactlyInAnyOrder(HttpMethod.POST, HttpMethod.PUT);
				assertThat(settings.keyHeader()).isEqualTo("X-Request-Key");
				assertThat(settings.maxAttempts()).isEqualTo(5);
				assertThat(settings.initialBackoff()).hasMillis(50);
				assertThat(settings.maxBackoff()).hasSeconds(2);
				assertThat(settings.backoffMultiplier()).isEqualTo(1.5);
				assertThat(settings.backoffJitter()).isEqualTo(0.25);
				assertThat(settings.maxRetryAfter()).hasSeconds(30);
				assertThat(settings.derivedKeys()).isFalse();
			});
	}

	@Test
	void defaultsAreTheSettingsDefaults() {
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.run((context) -> assertThat(context.getBean(IdempotencyClientInterceptor.class).getSettings())
				.isEqualTo(IdempotencyClientSettings.defaults()));
	}

	@Test
	void badValuesFailStartUpNamingTheProperty() {
		assertStartUpFails("idempo.client.max-attempts=0", "idempo.client.max-attempts", "at least 1");
		assertStartUpFails("idempo.client.methods=POST,GET", "idempo.client.methods", "'GET' is not a method");
		assertStartUpFails("idempo.client.backoff.jitter=1.5", "idempo.client.backoff.jitter", "between 0");
		assertStartUpFails("idempo.client.backoff.multiplier=0.5", "idempo.client.backoff.multiplier", "at least 1");
		assertStartUpFails("idempo.client.backoff.max=10ms", "idempo.client.backoff.max",
				"must not be shorter than idempo.client.backoff.initial");
		assertStartUpFails("idempo.client.max-retry-after=-1s", "idempo.client.max-retry-after", "negative");
		assertStartUpFails("idempo.client.key-header=Idempotency Key", "idempo.client.key-header", "header name");
	}

	private void assertStartUpFails(String property, String name, String reason) {
		this.runner.withPropertyValues("idempo.client.enabled=true", property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(name).hasMessageContaining(reason);
		});
	}

	@Test
	void aUsersInterceptorReplacesIdempos() {
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.withBean(IdempotencyClientInterceptor.class,
					() -> new IdempotencyClientInterceptor(IdempotencyClientSettings.defaults().withMaxAttempts(7)))
			.run((context) -> {
				IdempotencyClientInterceptor interceptor = context.getBean(IdempotencyClientInterceptor.class);
				assertThat(interceptor.getSettings().maxAttempts()).isEqualTo(7);
				assertThat(interceptors(context.getBean(RestClient.Builder.class))).containsExactly(interceptor);
			});
	}

	@Test
	void withoutBootsRestClientModuleTheInterceptorIsStillABean() {
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotencyClientInterceptor.class)
				.doesNotHaveBean(RestClientCustomizer.class));
	}

	@Test
	void countsAttemptsAndRetriesWhenMicrometerHasARegistry() {
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.run((context) -> {
				assertThat(context).hasSingleBean(MicrometerIdempotencyClientListener.class);
				MicrometerIdempotencyClientListener listener = context
					.getBean(MicrometerIdempotencyClientListener.class);
				listener.onAttempt("POST", AttemptOutcome.SERVER_ERROR);
				listener.onRetry("POST", RetryReason.SERVICE_UNAVAILABLE);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				assertThat(registry.get(MicrometerIdempotencyClientListener.ATTEMPTS)
					.tags("method", "POST", "outcome", "5xx")
					.counter()
					.count()).isEqualTo(1.0);
				assertThat(registry.get(MicrometerIdempotencyClientListener.RETRIES)
					.tags("method", "POST", "reason", "503")
					.counter()
					.count()).isEqualTo(1.0);
			});
	}

	@Test
	void aListenerThatFailsKeepsNeitherTheCallNorTheOtherListenersFromTheirEvents() {
		List<String> told = new ArrayList<>();
		this.runner.withPropertyValues("idempo.client.enabled=true")
			.withBean("failing", IdempotencyClientListener.class, () -> new IdempotencyClientListener() {

				@Override
				public void onAttempt(String method, AttemptOutcome outcome) {
					throw new IllegalStateException("registry down");
				}

				@Override
				public void onRetry(String method, RetryReason reason) {
					throw new IllegalStateException("registry down");
				}

			})
			.withBean("recording", IdempotencyClientListener.class, () -> new IdempotencyClientListener() {

				@Override
				public void onAttempt(String method, AttemptOutcome outcome) {
					told.add(method + " " + outcome.tag());
				}

				@Override
				public void onRetry(String method, RetryReason reason) {
					told.add(method + " retry " + reason.tag());
				}

			})
			.run((context) -> {
				IdempotencyClientInterceptor interceptor = context.getBean(IdempotencyClientInterceptor.class);
				Deque<Integer> statuses = new ArrayDeque<>(List.of(503, 200));
				RestClient client = RestClient.builder()
					.requestFactory((uri, method) -> new MockClientHttpRequest(method, uri) {

						@Override
						protected ClientHttpResponse executeInternal() {
							return new MockClientHttpResponse(new byte[0], statuses.pop());
						}

					})
					.requestInterceptor(interceptor)
					.build();
				assertThat(client.post()
					.uri("http://downstream.test/x")
					.retrieve()
					.toBodilessEntity()
					.getStatusCode()
					.value()).isEqualTo(200);
				assertThat(told).containsExactly("POST 5xx", "POST retry 503", "POST 2xx");
			});
	}

	@Test
	void everyClientPropertyIsDocumentedInTheReadmeAndListedInTheSampleConfiguration() throws IOException {
		JsonNode metadata;
		try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
			metadata = JsonMapper.builder().build().readTree(in);
		}
		List<String> properties = new ArrayList<>();
		for (JsonNode property : metadata.path("properties")) {
			String name = property.path("name").asString();
			if (name.startsWith("idempo.client.")) {
				properties.add(name);
			}
		}
		assertThat(properties).hasSize(10);
		String readme = Files.readString(Path.of("..", "docs", "client.md"));
		YamlPropertiesFactoryBean yaml = new YamlPropertiesFactoryBean();
		yaml.setResources(new FileSystemResource(
				Path.of("..", "idempo-sample-app", "src", "main", "resources", "application.yml")));
		Properties sample = yaml.getObject();
		assertThat(sample).isNotNull();
		assertThat(properties).allSatisfy((name) -> {
			assertThat(readme).as("README row of %s", name).contains("| `" + name + "` |");
			assertThat(sample).as("the sample's application.yml").containsKey(name);
		});
	}

	private static List<ClientHttpRequestInterceptor> interceptors(RestClient.Builder builder) {
		List<ClientHttpRequestInterceptor> interceptors = new ArrayList<>();
		builder.requestInterceptors(interceptors::addAll);
		return interceptors;
	}

	@Configuration(proxyBeanMethods = false)
	static class UnorderedInserting {

		@Bean
		RestClientCustomizer unorderedInsertingCustomizer() {
			return (builder) -> builder
				.requestInterceptors((interceptors) -> interceptors.add(0, OtherInterceptors.FRONT));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OtherInterceptors {

		static final ClientHttpRequestInterceptor OTHER = (request, body, execution) -> execution.execute(request,
				body);

		static final ClientHttpRequestInterceptor FRONT = (request, body, execution) -> execution.execute(request,
				body);

		@Bean
		@Order(Ordered.HIGHEST_PRECEDENCE)
		RestClientCustomizer appendingCustomizer() {
			return (builder) -> builder.requestInterceptor(OTHER);
		}

		@Bean
		@Order(0)
		RestClientCustomizer insertingCustomizer() {
			return (builder) -> builder.requestInterceptors((interceptors) -> interceptors.add(0, FRONT));
		}

	}

}
