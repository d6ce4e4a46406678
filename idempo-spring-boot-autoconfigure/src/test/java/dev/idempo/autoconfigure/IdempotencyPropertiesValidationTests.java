package dev.idempo.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Every property of idempo's core and store classes with a value that makes no sense
 * fails start-up with Spring Boot's binding report, naming the property and the range it
 * allows, before any bean uses it.
 *
 * @author idempo
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyPropertiesValidationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class));

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', quoteCharacter = '"',
			textBlock = """
					idempo.lock-ttl=-5s                                 | idempo.lock-ttl                                 | must be positive and at most 36500d
					idempo.lock-ttl=0s                                  | idempo.lock-ttl                                 | must be positive and at most 36500d
					idempo.lock-ttl=36501d                              | idempo.lock-ttl                                 | must be positive and at most 36500d
					idempo.response-ttl=0s                              | idempo.response-ttl                             | must be positive and at most 36500d
					idempo.response-ttl=36501d                          | idempo.response-ttl                             | must be positive and at most 36500d
					idempo.max-response-size=-1                         | idempo.max-response-size                        | must not be negative
					idempo.max-request-size=-1                          | idempo.max-request-size                         | must not be negative
					idempo.request-body-timeout=0s                      | idempo.request-body-timeout                     | must be positive
					idempo.request-body-timeout=-1s                     | idempo.request-body-timeout                     | must be positive
					idempo.max-buffered-size=0                          | idempo.max-buffered-size                        | must be positive
					idempo.key-header=Idempotency Key                   | idempo.key-header                               | HTTP header name
					idempo.key-header-aliases=X Key                     | idempo.key-header-aliases                       | 'X Key' is not an HTTP header name
					idempo.replayed-header=Idempotent Replayed         | idempo.replayed-header                          | HTTP header name
					idempo.replayed-header=Content-Length               | idempo.replayed-header                          | 'Content-Length' is a header that a response or the key already uses
					idempo.replayed-header=idempotency-key              | idempo.replayed-header                          | 'idempotency-key' is a header that a response or the key already uses
					idempo.responses.stored=6xx                         | idempo.responses.stored                         | '6xx' is neither a status code from 100 to 599
					idempo.responses.stored=2xx,abc                     | idempo.responses.stored                         | 'abc' is neither a status code
					idempo.responses.not-stored=99                      | idempo.responses.not-stored                     | '99' is neither a status code
					idempo.fingerprint.ignored-fields=timestamp         | idempo.fingerprint.ignored-fields               | 'timestamp' is not a JSON Pointer
					idempo.fingerprint.ignored-fields=/a~2b             | idempo.fingerprint.ignored-fields               | '~' must be followed by 0
					idempo.fingerprint.headers=X Tenant                 | idempo.fingerprint.headers                      | 'X Tenant' is not an HTTP header name
					idempo.conflict.retry-after=-1s                     | idempo.conflict.retry-after                     | must not be negative
					idempo.conflict.wait-timeout=-1s                    | idempo.conflict.wait-timeout                    | must not be negative
					idempo.store-failure.retry-after=-1s                | idempo.store-failure.retry-after                | must not be negative
					idempo.store.memory.max-entries=0                   | idempo.store.memory.max-entries                 | must be at least 1
					idempo.store.memory.max-size=0                      | idempo.store.memory.max-size                    | must be positive
					idempo.local-cache.maximum-size=0                   | idempo.local-cache.maximum-size                 | must be at least 1
					idempo.local-cache.max-age=0s                       | idempo.local-cache.max-age                      | must be at least 1ms
					idempo.local-cache.max-age=-1s                      | idempo.local-cache.max-age                      | must be at least 1ms
					idempo.store.redis.key-prefix=app{1}:               | idempo.store.redis.key-prefix                   | must not contain '{' or '}'
					idempo.store.redis.replica-acknowledgements=-1      | idempo.store.redis.replica-acknowledgements     | must be 0 (do not wait) or more
					idempo.store.redis.replica-acknowledgement-timeout=0s | idempo.store.redis.replica-acknowledgement-timeout | must be positive
					idempo.store.jdbc.lock-sessions=0                   | idempo.store.jdbc.lock-sessions                 | must be at least 1
					idempo.store.jdbc.table-name=responses; DROP        | idempo.store.jdbc.table-name                    | must be an identifier
					idempo.store.jdbc.timeout=0s                        | idempo.store.jdbc.timeout                       | must be positive and at most 12d
					idempo.store.jdbc.timeout=13d                       | idempo.store.jdbc.timeout                       | must be positive and at most 12d
					idempo.store.jdbc.network-timeout=500ms             | idempo.store.jdbc.network-timeout               | must be at least 1s and at most 24d
					idempo.store.jdbc.network-timeout=2s                | idempo.store.jdbc.network-timeout               | must not be shorter than idempo.store.jdbc.timeout
					idempo.store.jdbc.session-check-interval=0s         | idempo.store.jdbc.session-check-interval        | must be positive and at most 6d
					idempo.store.jdbc.session-check-interval=7d         | idempo.store.jdbc.session-check-interval        | must be positive and at most 6d
					idempo.store.jdbc.cleanup.interval=-1m              | idempo.store.jdbc.cleanup.interval              | must be positive
					idempo.store.jdbc.cleanup.batch-size=0              | idempo.store.jdbc.cleanup.batch-size            | must be at least 1
					idempo.store.jdbc.mysql.lock-prefix=my lock         | idempo.store.jdbc.mysql.lock-prefix             | must be 1 to 32 letters, digits or _.:/-
					idempo.store.jdbc.platform=oracle                   | idempo.store.jdbc.platform                      | must be 'postgresql' or 'mysql'
					""")
	void aValueOutOfRangeFailsBindingNamingThePropertyAndItsRange(String property, String name, String reason) {
		this.runner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(BindValidationException.class)
				.hasMessageContaining(name)
				.hasMessageContaining(reason);
		});
	}

	/**
	 * An {@code idempo.routes} entry: a path that is no {@code PathPattern}, or a method
	 * that never takes part (GET, HEAD, OPTIONS, TRACE) or is no method at all.
	 */
	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', quoteCharacter = '"',
			textBlock = """
					idempo.routes[0].path=payments/**                  | idempo.routes[0].path    | 'payments/**' is not a path pattern: it must start with '/'
					idempo.routes[0].path=/payments/**/refunds         | idempo.routes[0].path    | '/payments/**/refunds' is not a path pattern
					idempo.routes[0].path=                             | idempo.routes[0].path    | must be set
					idempo.routes[0].methods=GET                       | idempo.routes[0].methods | GET requests never take part (GET, HEAD, OPTIONS and TRACE pass through untouched)
					idempo.routes[0].methods=POST,head                 | idempo.routes[0].methods | HEAD requests never take part
					idempo.routes[0].methods=OPTIONS                   | idempo.routes[0].methods | OPTIONS requests never take part
					idempo.routes[0].methods=TRACE                     | idempo.routes[0].methods | TRACE requests never take part
					idempo.routes[0].methods=FETCH                     | idempo.routes[0].methods | 'FETCH' is not a method that takes part
					idempo.routes[0].methods=                          | idempo.routes[0].methods | must name at least one of POST, PATCH, PUT and DELETE
					idempo.routes[0].ttl=0s                            | idempo.routes[0].ttl     | must be positive and at most 36500d
					idempo.routes[0].responses.stored=6xx              | idempo.routes[0].responses.stored | '6xx' is neither a status code
					idempo.routes[0].fingerprint.ignored-fields=ts     | idempo.routes[0].fingerprint.ignored-fields | 'ts' is not a JSON Pointer
					""")
	void aRouteEntryThatCannotBeFollowedFailsBindingNamingIt(String property, String name, String reason) {
		aValueOutOfRangeFailsBindingNamingThePropertyAndItsRange(property, name, reason);
	}

	@Test
	void routeEntriesThatCanBeFollowedAreAccepted() {
		this.runner
			.withPropertyValues("idempo.routes[0].path=/payments/{id}/refunds", "idempo.routes[0].methods=post, Put",
					"idempo.routes[0].ttl=1h", "idempo.routes[0].required=true",
					"idempo.routes[0].cache-response=false", "idempo.routes[1].path=/**")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RouteProperties route = context.getBean(IdempotencyProperties.class).getRoutes().get(0);
				assertThat(route.getMethods()).containsExactly("post", "Put");
				assertThat(route.isRequired()).isTrue();
				assertThat(route.isCacheResponse()).isFalse();
				assertThat(context.getBean(IdempotencyProperties.class).getRoutes().get(1).getMethods())
					.containsExactly("POST", "PATCH", "PUT", "DELETE");
			});
	}

	@Test
	void bootsFailureReportNamesTheRouteEntry(CapturedOutput output) {
		SpringApplication application = new SpringApplication(MinimalApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(
				() -> application.run("--idempo.routes[0].path=/payments/**", "--idempo.routes[0].methods=POST,GET")
					.close());
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: idempo.routes[0].methods")
			.contains("Reason: GET requests never take part");
	}

	@Test
	void theEdgesOfEachRangeAreAccepted() {
		this.runner
			.withPropertyValues("idempo.lock-ttl=1ms", "idempo.response-ttl=36500d", "idempo.max-response-size=0",
					"idempo.max-request-size=0", "idempo.request-body-timeout=1ms", "idempo.max-buffered-size=1B",
					"idempo.conflict.retry-after=0s", "idempo.conflict.wait-timeout=0s",
					"idempo.store-failure.retry-after=0s", "idempo.store.memory.max-entries=1",
					"idempo.store.memory.max-size=1B", "idempo.local-cache.maximum-size=1",
					"idempo.local-cache.max-age=1ms", "idempo.store.redis.replica-acknowledgements=0",
					"idempo.store.jdbc.lock-sessions=1", "idempo.store.jdbc.timeout=12d",
					"idempo.store.jdbc.network-timeout=24d", "idempo.store.jdbc.session-check-interval=6d",
					"idempo.store.jdbc.cleanup.batch-size=1", "idempo.store.jdbc.platform=mysql",
					"idempo.responses.stored=1xx,599,5XX", "idempo.responses.not-stored=100",
					"idempo.fingerprint.ignored-fields=/,/a~0b~1c/0", "idempo.replayed-header=X-Replayed")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void bootsFailureReportNamesThePropertyAndTheRange(CapturedOutput output) {
		SpringApplication application = new SpringApplication(MinimalApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--idempo.store.jdbc.lock-sessions=0").close());
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: idempo.store.jdbc.lockSessions")
			.contains("Value: \"0\"")
			.contains("Origin: \"idempo.store.jdbc.lock-sessions\"")
			.contains("Reason: must be at least 1");
	}

	@Test
	void bootsFailureReportNamesAnInvalidResponsesEntry(CapturedOutput output) {
		SpringApplication application = new SpringApplication(MinimalApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--idempo.responses.stored=2xx,6xx").close());
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: idempo.responses.stored")
			.contains("Value: \"[2xx, 6xx]\"")
			.contains("Reason: '6xx' is neither a status code from 100 to 599 (201) nor a class from 1xx to 5xx (4xx)");
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(IdempotencyAutoConfiguration.class)
	static class MinimalApplication {

	}

}
