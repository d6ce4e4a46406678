package dev.idempo.autoconfigure;

import java.util.Locale;
import java.util.Properties;

import javax.sql.DataSource;

import dev.idempo.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempo.store.LockingStore;
import dev.idempo.store.jdbc.JdbcStoreSettings;
import dev.idempo.store.jdbc.MySqlLockingStore;
import dev.idempo.store.jdbc.PostgresLockingStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The PostgreSQL and MySQL/MariaDB stores, for {@code idempo.store.type=postgres} and
 * {@code mysql}, when Spring JDBC and Spring Boot's JDBC support are on the class path.
 * <p>
 * The stores keep a few lock sessions open for as long as the application runs, so they
 * never borrow them from the application's pool. By default they open them with the
 * connection settings (URL, user name, password) of the application's {@link DataSource}
 * through an unpooled {@link SimpleDriverDataSource}; a {@code DataSource} bean named (or
 * qualified) {@value #DATA_SOURCE_BEAN_NAME} is used instead, as it is, when one exists,
 * for the lock sessions, the cleanup and the schema script. Declaring it with
 * {@code @Bean(defaultCandidate = false)} keeps it out of the application's own injection
 * points.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ SimpleDriverDataSource.class, DataSourceBuilder.class })
@EnableConfigurationProperties(IdempotencyJdbcSchemaProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
class JdbcStoreConfiguration {

	/** The name (or qualifier) of a {@link DataSource} dedicated to idempo. */
	static final String DATA_SOURCE_BEAN_NAME = "idempotencyDataSource";

	static JdbcStoreSettings settings(IdempotencyProperties properties) {
		IdempotencyProperties.Store.Jdbc jdbc = properties.getStore().getJdbc();
		return new JdbcStoreSettings(jdbc.getTableName(), jdbc.getLockSessions(), jdbc.getTimeout(),
				jdbc.getSessionCheckInterval(), jdbc.getCleanup().getInterval(), jdbc.getCleanup().getBatchSize());
	}

	/**
	 * Where lock sessions and cleanup connections come from: the dedicated data source as
	 * it is, else an unpooled one with the application's connection settings.
	 */
	static DataSource lockSessionDataSource(StoreType type, ObjectProvider<DataSource> dedicated,
			ObjectProvider<DataSource> application) {
		DataSource own = dedicated.getIfAvailable();
		if (own != null) {
			return own;
		}
		DataSource shared = applicationDataSource(type, application);
		try {
			SimpleDriverDataSource derived = DataSourceBuilder.derivedFrom(shared)
				.type(SimpleDriverDataSource.class)
				.build();
			if (type == StoreType.MYSQL) {
				// lets a claim's two statements share one round trip; both drivers know
				// it
				Properties connectionProperties = new Properties();
				connectionProperties.setProperty("allowMultiQueries", "true");
				derived.setConnectionProperties(connectionProperties);
			}
			return derived;
		}
		catch (RuntimeException ex) {
			throw new IdempotencyStoreUnavailableException(type,
					"its lock sessions must not come from the application's connection pool, and idempo could not "
							+ "derive connection settings from the application's DataSource ("
							+ shared.getClass().getName() + "): " + ex.getMessage(),
					"Declare a DataSource bean named '" + DATA_SOURCE_BEAN_NAME
							+ "' (for example @Bean(defaultCandidate = false)) for idempo's lock sessions.");
		}
	}

	/**
	 * Where the schema script runs: the dedicated data source, else the application's.
	 */
	static DataSource schemaDataSource(StoreType type, ObjectProvider<DataSource> dedicated,
			ObjectProvider<DataSource> application) {
		DataSource own = dedicated.getIfAvailable();
		return (own != null) ? own : applicationDataSource(type, application);
	}

	private static DataSource applicationDataSource(StoreType type, ObjectProvider<DataSource> application) {
		DataSource dataSource = application.getIfUnique();
		if (dataSource == null) {
			String name = type.name().toLowerCase(Locale.ROOT);
			throw new IdempotencyStoreUnavailableException(type,
					"the " + name + " store needs a DataSource to connect with, and the application has none "
							+ "(or several and none is @Primary).",
					"Configure spring.datasource.url (with spring-boot-starter-jdbc and the JDBC driver), or declare "
							+ "a DataSource bean named '" + DATA_SOURCE_BEAN_NAME + "' for idempo.");
		}
		return dataSource;
	}

	static IdempotencyJdbcSchemaInitializer schemaInitializer(StoreType type, ObjectProvider<DataSource> dedicated,
			ObjectProvider<DataSource> application, IdempotencyJdbcSchemaProperties schema,
			IdempotencyProperties properties) {
		return new IdempotencyJdbcSchemaInitializer(schemaDataSource(type, dedicated, application), schema,
				properties.getStore().getJdbc().getTableName());
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "idempo.store.type", havingValue = "postgres")
	static class PostgresStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(IdempotencyJdbcSchemaInitializer.class)
		IdempotencyJdbcSchemaInitializer idempotencySchemaInitializer(
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application, IdempotencyJdbcSchemaProperties schema,
				IdempotencyProperties properties) {
			return schemaInitializer(StoreType.POSTGRES, dedicated, application, schema, properties);
		}

		@Bean
		@ConditionalOnMissingBean(LockingStore.class)
		@DependsOnDatabaseInitialization
		PostgresLockingStore idempotencyLockingStore(IdempotencyProperties properties,
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application) {
			return new PostgresLockingStore(lockSessionDataSource(StoreType.POSTGRES, dedicated, application),
					settings(properties), properties.getStore().getJdbc().getPostgres().getLockNamespace());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "idempo.store.type", havingValue = "mysql")
	static class MySqlStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(IdempotencyJdbcSchemaInitializer.class)
		IdempotencyJdbcSchemaInitializer idempotencySchemaInitializer(
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application, IdempotencyJdbcSchemaProperties schema,
				IdempotencyProperties properties) {
			return schemaInitializer(StoreType.MYSQL, dedicated, application, schema, properties);
		}

		@Bean
		@ConditionalOnMissingBean(LockingStore.class)
		@DependsOnDatabaseInitialization
		MySqlLockingStore idempotencyLockingStore(IdempotencyProperties properties,
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application) {
			return new MySqlLockingStore(lockSessionDataSource(StoreType.MYSQL, dedicated, application),
					settings(properties), properties.getStore().getJdbc().getMysql().getLockPrefix());
		}

	}

}
