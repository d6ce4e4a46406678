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
					idempo.max-buffered-size=0                          | idempo.max-buffered-size                        | must be positive
					idempo.key-header=Idempotency Key                   | idempo.key-header                               | HTTP header name
					idempo.key-header-aliases=X Key                     | idempo.key-header-aliases                       | 'X Key' is not an HTTP header name
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

	@Test
	void theEdgesOfEachRangeAreAccepted() {
		this.runner
			.withPropertyValues("idempo.lock-ttl=1ms", "idempo.response-ttl=36500d", "idempo.max-response-size=0",
					"idempo.max-request-size=0", "idempo.max-buffered-size=1B", "idempo.conflict.retry-after=0s",
					"idempo.conflict.wait-timeout=0s", "idempo.store-failure.retry-after=0s",
					"idempo.store.memory.max-entries=1", "idempo.store.memory.max-size=1B",
					"idempo.local-cache.maximum-size=1", "idempo.local-cache.max-age=1ms",
					"idempo.store.redis.replica-acknowledgements=0", "idempo.store.jdbc.lock-sessions=1",
					"idempo.store.jdbc.timeout=12d", "idempo.store.jdbc.network-timeout=24d",
					"idempo.store.jdbc.session-check-interval=6d", "idempo.store.jdbc.cleanup.batch-size=1",
					"idempo.store.jdbc.platform=mysql")
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

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(IdempotencyAutoConfiguration.class)
	static class MinimalApplication {

	}

}
