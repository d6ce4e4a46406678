package dev.idempo.autoconfigure.store.jdbc;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.IdempotencyFailureAnalyzer;
import dev.idempo.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempo.autoconfigure.IdempotencyStoreUnavailableException;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.LockingStore;
import dev.idempo.store.LockingStoreException;
import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.store.jdbc.JdbcStoreSettings;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.testsupport.TestDatabases;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Tests for the auto-configuration of the PostgreSQL and MySQL/MariaDB stores. Contexts
 * that touch the database run against the real test servers.
 *
 * @author idempo
 */
class JdbcStoreConfigurationTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(DataSourceAutoConfiguration.class, IdempotencyAutoConfiguration.class));

	private WebApplicationContextRunner on(TestDatabase database, String type) {
		WebApplicationContextRunner runner = this.contextRunner.withPropertyValues("idempo.store.type=" + type,
				"spring.datasource.url=" + database.url());
		if (database.username() != null) {
			runner = runner.withPropertyValues("spring.datasource.username=" + database.username());
		}
		if (database.password() != null) {
			runner = runner.withPropertyValues("spring.datasource.password=" + database.password());
		}
		return runner;
	}

	@Test
	void typePostgresPicksThePostgresStore() {
		AtomicReference<LockingStore> store = new AtomicReference<>();
		on(TestDatabases.postgres(), "postgres").run((context) -> {
			assertThat(context).hasSingleBean(LockingStore.class);
			assertThat(context.getBean("idempotencyLockingStore")).isInstanceOf(JdbcLockingStore.class);
			assertThat(context.getBean(LockingStore.class).name()).isEqualTo("postgres");
			assertThat(context).hasSingleBean(IdempotencyJdbcSchemaInitializer.class);
			assertThat(context).doesNotHaveBean(InMemoryLockingStore.class);
			store.set(context.getBean(LockingStore.class));
		});
		// closed with the context, which frees its lock sessions
		assertThatExceptionOfType(LockingStoreException.class)
			.isThrownBy(() -> store.get().claim("0123abcd", Duration.ofSeconds(30)))
			.withMessageContaining("closed");
	}

	@Test
	void typeMysqlPicksTheMySqlStore() {
		on(TestDatabases.mysql(), "mysql").run((context) -> {
			assertThat(context).hasSingleBean(LockingStore.class);
			assertThat(context.getBean("idempotencyLockingStore")).isInstanceOf(JdbcLockingStore.class);
			assertThat(context.getBean(LockingStore.class).name()).isEqualTo("mysql");
		});
	}

	@Test
	void userStoreWins() {
		on(TestDatabases.postgres(), "postgres")
			.withBean("myStore", LockingStore.class, () -> new InMemoryLockingStore(Clock.systemUTC(), 10, 1024 * 1024))
			.run((context) -> {
				assertThat(context).hasSingleBean(LockingStore.class);
				assertThat(context).hasBean("myStore");
				assertThat(context).doesNotHaveBean(JdbcLockingStore.class);
			});
	}

	@Test
	void propertiesBind() {
		on(TestDatabases.postgres(), "postgres")
			.withPropertyValues("idempo.store.jdbc.table-name=public.my_responses", "idempo.store.jdbc.lock-sessions=2",
					"idempo.store.jdbc.timeout=3s", "idempo.store.jdbc.network-timeout=20s",
					"idempo.store.jdbc.session-check-interval=30s", "idempo.store.jdbc.cleanup.interval=5m",
					"idempo.store.jdbc.cleanup.batch-size=100", "idempo.store.jdbc.postgres.lock-namespace=-7",
					"idempo.store.jdbc.mysql.lock-prefix=shop:", "idempo.store.jdbc.initialize-schema=never",
					"idempo.store.jdbc.continue-on-error=false")
			.run((context) -> {
				IdempotencyJdbcStoreProperties properties = context.getBean(IdempotencyJdbcStoreProperties.class);
				assertThat(JdbcStoreConfiguration.settings(properties))
					.isEqualTo(new JdbcStoreSettings("public.my_responses", 2, Duration.ofSeconds(3),
							Duration.ofSeconds(30), Duration.ofMinutes(5), 100, Duration.ofSeconds(20)));
				assertThat(properties.getPostgres().getLockNamespace()).isEqualTo(-7);
				assertThat(properties.getMysql().getLockPrefix()).isEqualTo("shop:");
				IdempotencyJdbcSchemaProperties schema = context.getBean(IdempotencyJdbcSchemaProperties.class);
				assertThat(schema.getInitializeSchema()).isEqualTo(DatabaseInitializationMode.NEVER);
				assertThat(schema.isContinueOnError()).isFalse();
			});
	}

	@Test
	void batchingCanBeTurnedOff() {
		on(TestDatabases.postgres(), "postgres").withPropertyValues("idempo.store.jdbc.batching=false")
			.run((context) -> {
				IdempotencyJdbcStoreProperties properties = context.getBean(IdempotencyJdbcStoreProperties.class);
				assertThat(JdbcStoreConfiguration.settings(properties).batching()).isFalse();
				assertThat(JdbcStoreConfiguration.settings(new IdempotencyJdbcStoreProperties()).batching()).isTrue();
			});
	}

	@Test
	void defaultsAreThoseOfTheStore() {
		JdbcStoreSettings settings = JdbcStoreConfiguration.settings(new IdempotencyJdbcStoreProperties());
		assertThat(settings).isEqualTo(JdbcStoreSettings.defaults());
		assertThat(new IdempotencyJdbcStoreProperties().getPostgres().getLockNamespace())
			.isEqualTo(JdbcLockingStore.DEFAULT_LOCK_NAMESPACE);
		assertThat(new IdempotencyJdbcStoreProperties().getMysql().getLockPrefix())
			.isEqualTo(JdbcLockingStore.DEFAULT_LOCK_PREFIX);
		assertThat(new IdempotencyJdbcSchemaProperties().getInitializeSchema())
			.isEqualTo(DatabaseInitializationMode.EMBEDDED);
	}

	@Test
	void invalidTableNameFailsStartup() {
		on(TestDatabases.postgres(), "postgres").withPropertyValues("idempo.store.jdbc.table-name=responses; DROP")
			.run((context) -> assertThat(context).getFailure().rootCause().hasMessageContaining("Table name"));
	}

	@Test
	void initializeSchemaAlwaysCreatesTheConfiguredTable() {
		createsTable(TestDatabases.postgres(), "postgres");
		createsTable(TestDatabases.mysql(), "mysql");
	}

	private void createsTable(TestDatabase database, String type) {
		String table = "idempo_init_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
		try {
			on(database, type).withPropertyValues("idempo.store.jdbc.table-name=" + table).run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(tableExists(database, table)).isFalse();
			});
			on(database, type)
				.withPropertyValues("idempo.store.jdbc.table-name=" + table,
						"idempo.store.jdbc.initialize-schema=always")
				.run((context) -> {
					assertThat(tableExists(database, table)).isTrue();
					LockingStore store = context.getBean(LockingStore.class);
					String key = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
					assertThat(store.claim(key, Duration.ofSeconds(30))).isInstanceOf(ClaimResult.Acquired.class);
				});
		}
		finally {
			database.dropTable(table);
		}
	}

	private static boolean tableExists(TestDatabase database, String table) {
		Integer count = database.jdbc()
			.queryForObject("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = ?", Integer.class,
					table);
		return count != null && count > 0;
	}

	@Test
	void lockSessionsDoNotComeFromTheApplicationsPool() {
		TestDatabase database = TestDatabases.mysql();
		try (HikariDataSource pool = new HikariDataSource()) {
			pool.setJdbcUrl(database.url());
			pool.setUsername(database.username());
			pool.setPassword(database.password());
			DataSource derived = JdbcStoreConfiguration.lockSessionDataSource(StoreType.MYSQL,
					JdbcStoreSettings.defaults(), provider(null), provider(pool));
			assertThat(derived).isInstanceOf(SimpleDriverDataSource.class);
			SimpleDriverDataSource unpooled = (SimpleDriverDataSource) derived;
			assertThat(unpooled.getUrl()).isEqualTo(database.url());
			assertThat(unpooled.getUsername()).isEqualTo(database.username());
			assertThat(unpooled.getConnectionProperties()).containsEntry("allowMultiQueries", "true");
			assertThat(pool.isRunning()).as("the application's pool is left alone").isFalse();
		}
	}

	@Test
	void aPoolLendsLockSessionsOnlyItsSettingsIncludingItsDataSourceProperties() throws Exception {
		TestDatabase database = TestDatabases.postgres();
		String applicationName = "idempo-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
		JdbcStoreSettings settings = JdbcStoreSettings.defaults().withTimeout(Duration.ofSeconds(3));
		try (HikariDataSource pool = new HikariDataSource()) {
			pool.setJdbcUrl(database.url());
			pool.setUsername(database.username());
			pool.setPassword(database.password());
			pool.addDataSourceProperty("ApplicationName", applicationName);
			// a pooled idempotencyDataSource, as DataSourceBuilder builds by default,
			// and the application's pool
			for (boolean dedicated : new boolean[] { true, false }) {
				DataSource derived = JdbcStoreConfiguration.lockSessionDataSource(StoreType.POSTGRES, settings,
						provider(dedicated ? pool : null), provider(dedicated ? null : pool));
				assertThat(derived).isInstanceOf(SimpleDriverDataSource.class);
				assertThat(((SimpleDriverDataSource) derived).getConnectionProperties())
					.containsEntry("ApplicationName", applicationName)
					.containsEntry("loginTimeout", "3")
					.containsEntry("connectTimeout", "3");
				try (Connection connection = derived.getConnection()) {
					assertThat(new JdbcTemplate(new SingleConnectionDataSource(connection, true))
						.queryForObject("SELECT current_setting('application_name')", String.class))
						.isEqualTo(applicationName);
				}
			}
			assertThat(pool.isRunning()).as("no connection was taken from the pool").isFalse();
		}
	}

	@Test
	void aDataSourceThatIsNotAPoolIsUsedAsItIs() {
		DataSource plain = TestDatabases.postgres().dataSource();
		assertThat(JdbcStoreConfiguration.lockSessionDataSource(StoreType.POSTGRES, JdbcStoreSettings.defaults(),
				provider(plain), provider(null)))
			.isSameAs(plain);
	}

	@Test
	void lockSessionsGiveUpOnAServerThatNeverAnswers() throws Exception {
		JdbcStoreSettings settings = JdbcStoreSettings.defaults().withTimeout(Duration.ofSeconds(1));
		// accepts connections (the kernel does) but never says a word
		try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
			String address = "//127.0.0.1:" + silent.getLocalPort() + "/test";
			for (String url : new String[] { "jdbc:postgresql:" + address, "jdbc:mariadb:" + address,
					"jdbc:mysql:" + address }) {
				StoreType type = url.startsWith("jdbc:postgresql:") ? StoreType.POSTGRES : StoreType.MYSQL;
				SimpleDriverDataSource application = new SimpleDriverDataSource(DriverManager.getDriver(url), url,
						"idempo", "secret");
				DataSource derived = JdbcStoreConfiguration.lockSessionDataSource(type, settings, provider(null),
						provider(application));
				AutoCloseable store = (type == StoreType.POSTGRES)
						? JdbcLockingStore.postgres(derived, settings, JdbcLockingStore.DEFAULT_LOCK_NAMESPACE)
						: JdbcLockingStore.mysql(derived, settings, JdbcLockingStore.DEFAULT_LOCK_PREFIX);
				try {
					assertTimeoutPreemptively(Duration.ofSeconds(8),
							() -> assertThatExceptionOfType(LockingStoreException.class)
								.isThrownBy(() -> ((LockingStore) store).claim("0123abcd", Duration.ofSeconds(30))),
							url);
				}
				finally {
					store.close();
				}
			}
		}
	}

	@Test
	void aDataSourceNamedIdempotencyDataSourceIsUsedAsItIs() {
		AtomicInteger connections = new AtomicInteger();
		TestDatabase database = TestDatabases.postgres();
		String table = "idempo_dedicated_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
		try {
			on(database, "postgres").withUserConfiguration(DedicatedDataSource.class)
				.withBean(AtomicInteger.class, () -> connections)
				.withPropertyValues("idempo.store.jdbc.table-name=" + table,
						"idempo.store.jdbc.initialize-schema=always")
				.run((context) -> {
					// the application's own DataSource is still auto-configured
					assertThat(context).hasBean("dataSource");
					assertThat(context.getBean(DataSource.class)).isInstanceOf(HikariDataSource.class);
					// the schema script ran on the dedicated DataSource
					assertThat(connections).hasPositiveValue();
					int before = connections.get();
					LockingStore store = context.getBean(LockingStore.class);
					String key = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
					assertThat(store.claim(key, Duration.ofSeconds(30))).isInstanceOf(ClaimResult.Acquired.class);
					assertThat(connections).hasValueGreaterThan(before);
					assertThat(((HikariDataSource) context.getBean(DataSource.class)).isRunning()).isFalse();
				});
		}
		finally {
			database.dropTable(table);
		}
	}

	@Test
	void withoutADataSourceStartupFailsNamingWhatToConfigure() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempo.store.type=postgres")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains("'postgres'").contains("needs a DataSource");
				assertThat(analysis.getAction()).contains("spring.datasource.url").contains("idempotencyDataSource");
			});
	}

	@Test
	void withoutSpringJdbcStartupFailsNamingTheDependency() {
		WebApplicationContextRunner runner = new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.jdbc", "org.springframework.boot.jdbc"));
		runner.withPropertyValues("idempo.store.type=postgres").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains("'postgres'").contains("Spring JDBC");
			assertThat(analysis.getAction()).contains("spring-boot-starter-jdbc").contains("org.postgresql:postgresql");
		});
		runner.withPropertyValues("idempo.store.type=mysql").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getAction()).contains("spring-boot-starter-jdbc")
				.contains("mariadb-java-client")
				.contains("mysql-connector-j");
		});
		// other stores do not need it
		runner.run((context) -> assertThat(context).hasSingleBean(InMemoryLockingStore.class));
	}

	private static FailureAnalysis analyze(AssertableWebApplicationContext context) {
		assertThat(context).hasFailed();
		Throwable failure = context.getStartupFailure();
		while (failure != null && !(failure instanceof IdempotencyStoreUnavailableException)) {
			failure = failure.getCause();
		}
		assertThat(failure).as("IdempotencyStoreUnavailableException in the failure chain").isNotNull();
		FailureAnalysis analysis = new IdempotencyFailureAnalyzer().analyze(context.getStartupFailure());
		assertThat(analysis).isNotNull();
		return analysis;
	}

	private static <T> ObjectProvider<T> provider(T value) {
		return new ObjectProvider<>() {

			@Override
			public T getObject() {
				return value;
			}

			@Override
			public T getIfAvailable() {
				return value;
			}

			@Override
			public T getIfUnique() {
				return value;
			}

		};
	}

	@Configuration(proxyBeanMethods = false)
	static class DedicatedDataSource {

		@Bean(defaultCandidate = false)
		DataSource idempotencyDataSource(AtomicInteger connections) {
			JdbcTemplate probe = TestDatabases.postgres().jdbc();
			return new DelegatingDataSource(probe.getDataSource()) {

				@Override
				public Connection getConnection() throws SQLException {
					connections.incrementAndGet();
					return super.getConnection();
				}

			};
		}

	}

}
