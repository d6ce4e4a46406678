package dev.idempo.autoconfigure;

import java.time.Clock;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.idempo.store.LockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.testsupport.TestRedis;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store that cannot be reached at start-up: the application starts, as it did before,
 * and exactly one WARN line names the store, its address and the cause, and tells an
 * outage from a configuration error.
 *
 * @author idempo
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyStoreStartupCheckTests {

	private static final String OUTAGE = "the store is unreachable now; requests get 503 until it answers";

	private static final String PERMANENT = "this looks like a configuration error that will not go away by itself";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, IdempotencyAutoConfiguration.class));

	private final ApplicationContextRunner jdbcRunner = this.runner
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
		.withPropertyValues("spring.datasource.hikari.connection-timeout=1000", "idempo.store.jdbc.timeout=2s");

	@Test
	void redisOnAClosedPortIsAnOutage(CapturedOutput output) {
		int port = TestRedis.freePort();
		this.runner
			.withPropertyValues("idempo.store.type=redis", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + port, "spring.data.redis.connect-timeout=2s")
			.run((context) -> assertOneWarning(context, output, "idempo's redis store at 127.0.0.1:" + port, OUTAGE));
	}

	@Test
	void postgresOnAClosedPortIsAnOutageAlsoWhenTheSchemaScriptCannotRun(CapturedOutput output) {
		int port = TestRedis.freePort();
		TestDatabase database = TestDatabases.postgres();
		String url = database.url().replaceFirst("//([^/:]+)(:\\d+)?/", "//127.0.0.1:" + port + "/");
		on(database, "postgres", url).withPropertyValues("idempo.store.jdbc.initialize-schema=always")
			.run((context) -> assertOneWarning(context, output,
					"idempo's postgres store at " + url.replaceFirst("[?;].*$", ""), OUTAGE));
	}

	@Test
	void aPostgresDatabaseThatDoesNotExistIsAConfigurationError(CapturedOutput output) {
		TestDatabase database = TestDatabases.postgres();
		String url = database.url().replaceFirst("(//[^/]+)/[^?;]*", "$1/idempo_no_such_db");
		on(database, "postgres", url).withPropertyValues("idempo.store.jdbc.initialize-schema=always")
			.run((context) -> assertOneWarning(context, output, "idempo_no_such_db", PERMANENT,
					"check that the database named in the URL exists"));
	}

	@Test
	void aMariaDbUserWithAWrongPasswordIsAConfigurationError(CapturedOutput output) {
		TestDatabase database = TestDatabases.mysql();
		this.jdbcRunner
			.withPropertyValues("idempo.store.type=mysql", "spring.datasource.url=" + database.url(),
					"spring.datasource.username=nosuchuser", "spring.datasource.password=wrong")
			.run((context) -> assertOneWarning(context, output, "idempo's mysql store at ", PERMANENT,
					"check the user name and password"));
	}

	@Test
	void aStoreThatAnswersLogsNoWarning(CapturedOutput output) {
		this.runner.withPropertyValues("idempo.store.type=redis", "spring.data.redis.url=" + TestRedis.server().url())
			.run((context) -> {
				assertThat(context).hasNotFailed();
				context.getBean(IdempotencyStoreStartupCheck.class).done().get(30, TimeUnit.SECONDS);
				assertThat(warnings(output)).isEmpty();
			});
	}

	@Test
	void anApplicationsOwnStoreIsNotChecked() {
		this.runner.withPropertyValues("idempo.store.type=redis", "spring.data.redis.port=" + TestRedis.freePort())
			.withBean(LockingStore.class, () -> new InMemoryLockingStore(Clock.systemUTC(), 10, 1024))
			.run((context) -> assertThat(context.getBean(IdempotencyStoreStartupCheck.class).done()).isDone());
	}

	private ApplicationContextRunner on(TestDatabase database, String type, String url) {
		ApplicationContextRunner runner = this.jdbcRunner.withPropertyValues("idempo.store.type=" + type,
				"spring.datasource.url=" + url);
		if (database.username() != null) {
			runner = runner.withPropertyValues("spring.datasource.username=" + database.username());
		}
		if (database.password() != null) {
			runner = runner.withPropertyValues("spring.datasource.password=" + database.password());
		}
		return runner;
	}

	private static void assertOneWarning(AssertableApplicationContext context, CapturedOutput output, String... parts)
			throws Exception {
		assertThat(context).hasNotFailed();
		context.getBean(IdempotencyStoreStartupCheck.class).done().get(30, TimeUnit.SECONDS);
		List<String> warnings = warnings(output);
		assertThat(warnings).hasSize(1);
		assertThat(warnings.get(0)).contains(parts).contains("cannot be reached at start-up");
	}

	/**
	 * idempo's WARN lines: MariaDB's driver logs one of its own for every refused login.
	 */
	private static List<String> warnings(CapturedOutput output) {
		return output.getAll()
			.lines()
			.filter((line) -> line.contains(" WARN ") && line.contains("dev.idempo."))
			.toList();
	}

}
