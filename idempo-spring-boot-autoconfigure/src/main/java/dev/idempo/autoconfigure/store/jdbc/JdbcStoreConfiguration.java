package dev.idempo.autoconfigure.store.jdbc;

import java.lang.reflect.Method;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Properties;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfigMXBean;
import com.zaxxer.hikari.HikariDataSource;
import org.jspecify.annotations.Nullable;

import dev.idempo.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.autoconfigure.IdempotencyStoreStartupCheck;
import dev.idempo.autoconfigure.IdempotencyStoreUnavailableException;
import dev.idempo.store.LockingStore;
import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.store.jdbc.JdbcStoreSettings;
import dev.idempo.store.jdbc.TransactionalRecords;
import dev.idempo.transaction.TransactionalClaims;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.jdbc.DataSourceUnwrapper;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.AbstractDriverBasedDataSource;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The PostgreSQL and MySQL/MariaDB stores, for {@code idempo.store.type=postgres} and
 * {@code mysql}, when Spring JDBC and Spring Boot's JDBC support are on the class path.
 * <p>
 * The stores keep a few lock sessions open for as long as the application runs, so they
 * never borrow them from the application's pool, and closing one must end its database
 * session. By default they open them with the connection settings (URL, user name,
 * password, Hikari data source properties) of the application's {@link DataSource}
 * through an unpooled {@link SimpleDriverDataSource}, with connect and login timeouts
 * derived from {@code idempo.store.jdbc.timeout}. A {@code DataSource} bean named (or
 * qualified) {@value #DATA_SOURCE_BEAN_NAME} is used instead when one exists, for the
 * lock sessions, the cleanup and the schema script: as it is, unless it is a connection
 * pool, whose settings are then used the same way. Declaring it with
 * {@code @Bean(defaultCandidate = false)} keeps it out of the application's own injection
 * points.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ SimpleDriverDataSource.class, DataSourceBuilder.class })
@EnableConfigurationProperties({ IdempotencyJdbcStoreProperties.class, IdempotencyJdbcSchemaProperties.class })
@Import(DatabaseInitializationDependencyConfigurer.class)
public final class JdbcStoreConfiguration {

	/** The name (or qualifier) of a {@link DataSource} dedicated to idempo. */
	static final String DATA_SOURCE_BEAN_NAME = "idempotencyDataSource";

	/**
	 * The name of a {@link PlatformTransactionManager} that transactional handlers use
	 * instead of the application's (unique or primary) one.
	 */
	static final String TRANSACTION_MANAGER_BEAN_NAME = "idempotencyTransactionManager";

	/** The name of the bean that runs transactional handlers and methods. */
	public static final String TRANSACTIONAL_BEAN_NAME = "idempotencyTransactional";

	private static final boolean HIKARI_PRESENT = ClassUtils.isPresent("com.zaxxer.hikari.HikariDataSource",
			JdbcStoreConfiguration.class.getClassLoader());

	/** The connection pools whose connections outlive {@code close()}. */
	private static final String[] POOL_TYPES = { "com.zaxxer.hikari.HikariDataSource",
			"org.apache.tomcat.jdbc.pool.DataSourceProxy", "org.apache.commons.dbcp2.BasicDataSource",
			"oracle.ucp.jdbc.PoolDataSource", "org.mariadb.jdbc.MariaDbPoolDataSource",
			"com.mchange.v2.c3p0.AbstractComboPooledDataSource", "org.vibur.dbcp.ViburDBCPDataSource" };

	static JdbcStoreSettings settings(IdempotencyJdbcStoreProperties jdbc) {
		return new JdbcStoreSettings(jdbc.getTableName(), jdbc.getLockSessions(), jdbc.getTimeout(),
				jdbc.getSessionCheckInterval(), jdbc.getCleanup().getInterval(), jdbc.getCleanup().getBatchSize(),
				jdbc.getNetworkTimeout(), jdbc.isBatching());
	}

	/**
	 * Where lock sessions and cleanup connections come from: connections that are
	 * database sessions of their own, because closing a lock session must end it and so
	 * free its locks. The dedicated data source is used as it is unless it is a
	 * connection pool; a pool (the dedicated one or, always, the application's) only
	 * lends its connection settings to an unpooled {@link SimpleDriverDataSource}, with
	 * connect and login timeouts derived from {@code settings}.
	 */
	static DataSource lockSessionDataSource(StoreType type, JdbcStoreSettings settings,
			ObjectProvider<DataSource> dedicated, ObjectProvider<DataSource> application) {
		DataSource own = dedicated.getIfAvailable();
		if (own != null && !isPool(own)) {
			return own;
		}
		DataSource source = (own != null) ? own : applicationDataSource(type, application);
		try {
			return unpooled(type, settings, source);
		}
		catch (RuntimeException ex) {
			String whose = (own != null) ? "the connection pool '" + DATA_SOURCE_BEAN_NAME + "'"
					: "the application's DataSource";
			throw new IdempotencyStoreUnavailableException(type,
					"its lock sessions must be database sessions of their own, not pooled connections, and idempo "
							+ "could not derive connection settings from " + whose + " (" + source.getClass().getName()
							+ "): " + ex.getMessage(),
					"Declare a DataSource bean named '" + DATA_SOURCE_BEAN_NAME
							+ "' that is not a pool (for example a SimpleDriverDataSource, with "
							+ "@Bean(defaultCandidate = false)) for idempo's lock sessions.");
		}
	}

	/**
	 * An unpooled data source with the connection settings of {@code source}: URL, user
	 * name, password and, for a Hikari pool, its data source properties.
	 */
	static SimpleDriverDataSource unpooled(StoreType type, JdbcStoreSettings settings, DataSource source) {
		SimpleDriverDataSource derived = DataSourceBuilder.derivedFrom(source)
			.type(SimpleDriverDataSource.class)
			.build();
		Properties connectionProperties = new Properties();
		if (HIKARI_PRESENT) {
			connectionProperties.putAll(Hikari.dataSourceProperties(source));
		}
		if (type == StoreType.MYSQL) {
			// lets a claim's two statements share one round trip; both drivers know it
			connectionProperties.putIfAbsent("allowMultiQueries", "true");
		}
		addTimeouts(derived.getUrl(), settings, connectionProperties);
		derived.setConnectionProperties(connectionProperties);
		return derived;
	}

	/**
	 * Bounds opening a connection, which a request may wait for, by the store's timeout
	 * (rounded up to whole seconds, as its statement timeout is), unless the URL or the
	 * properties already say: the TCP connect, the login and, since MySQL's driver has no
	 * login timeout, reads while logging in. Once open, the store gives each connection
	 * its own, longer network timeout. PostgreSQL's driver counts seconds, MariaDB's and
	 * MySQL's milliseconds.
	 */
	static void addTimeouts(@Nullable String url, JdbcStoreSettings settings, Properties properties) {
		if (url == null) {
			return;
		}
		long connect = Math.max(1, (settings.timeout().toMillis() + 999) / 1000);
		if (url.startsWith("jdbc:postgresql:")) {
			setUnlessGiven(url, properties, "loginTimeout", connect);
			setUnlessGiven(url, properties, "connectTimeout", connect);
			setUnlessGiven(url, properties, "socketTimeout", connect);
		}
		else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
			setUnlessGiven(url, properties, "connectTimeout", connect * 1000);
			setUnlessGiven(url, properties, "socketTimeout", connect * 1000);
		}
	}

	private static void setUnlessGiven(String url, Properties properties, String name, long value) {
		boolean inUrl = url.toLowerCase(Locale.ROOT).matches(".*[?&;]" + name.toLowerCase(Locale.ROOT) + "=.*");
		boolean inProperties = properties.stringPropertyNames()
			.stream()
			.anyMatch((given) -> given.equalsIgnoreCase(name));
		if (!inUrl && !inProperties) {
			properties.setProperty(name, Long.toString(value));
		}
	}

	/**
	 * Whether {@code dataSource} lends out connections that outlive {@code close()}: one
	 * of the connection pools Spring Boot knows, possibly behind a wrapper.
	 */
	static boolean isPool(DataSource dataSource) {
		for (String name : POOL_TYPES) {
			if (ClassUtils.isPresent(name, JdbcStoreConfiguration.class.getClassLoader())) {
				Class<?> type = ClassUtils.resolveClassName(name, JdbcStoreConfiguration.class.getClassLoader());
				if (type.isInstance(dataSource) || unwrapsTo(dataSource, type)) {
					return true;
				}
			}
		}
		return false;
	}

	private static boolean unwrapsTo(DataSource dataSource, Class<?> type) {
		try {
			return dataSource.isWrapperFor(type);
		}
		catch (SQLException | RuntimeException ex) {
			return false;
		}
	}

	/**
	 * What is read from a Hikari pool; apart so that Hikari is needed only when present.
	 */
	private static final class Hikari {

		static Properties dataSourceProperties(DataSource source) {
			HikariDataSource hikari = DataSourceUnwrapper.unwrap(source, HikariConfigMXBean.class,
					HikariDataSource.class);
			return (hikari != null) ? hikari.getDataSourceProperties() : new Properties();
		}

	}

	/**
	 * The start-up check of the store, which reaches the database where its lock sessions
	 * do.
	 */
	static IdempotencyStoreStartupCheck startupCheck(StoreType type, @Nullable JdbcLockingStore store,
			IdempotencyProperties properties, IdempotencyJdbcStoreProperties jdbc, ObjectProvider<DataSource> dedicated,
			ObjectProvider<DataSource> application) {
		String address = (store != null) ? address(lockSessionDataSource(type, settings(jdbc), dedicated, application))
				: "";
		return new IdempotencyStoreStartupCheck(store, type.name().toLowerCase(Locale.ROOT), address,
				properties.getStoreFailure().getMode() == IdempotencyProperties.StoreFailureMode.FAIL_OPEN);
	}

	/**
	 * The URL of a data source without its parameters and user information, which may
	 * hold a password; else its class.
	 */
	static String address(DataSource dataSource) {
		String url = (dataSource instanceof AbstractDriverBasedDataSource driverBased) ? driverBased.getUrl() : null;
		if (url == null) {
			return dataSource.getClass().getName();
		}
		return url.replaceFirst("[?;].*$", "").replaceFirst("//[^/@]*@", "//");
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
			IdempotencyJdbcStoreProperties properties) {
		if (schema.getPlatform() == null) {
			// the store type says which script: no connection needed to detect it, so
			// that the application can start while the database is down
			schema.setPlatform((type == StoreType.POSTGRES) ? "postgresql" : "mysql");
		}
		return new IdempotencyJdbcSchemaInitializer(schemaDataSource(type, dedicated, application), schema,
				properties.getTableName());
	}

	/**
	 * Transactional mode: on the data source of the record table (the dedicated one, else
	 * the application's), with the transaction manager named
	 * {@value #TRANSACTION_MANAGER_BEAN_NAME}, else the application's unique or primary
	 * one, looked up when a transactional handler first needs it.
	 */
	static TransactionalClaims transactional(StoreType type, IdempotencyJdbcStoreProperties jdbc,
			ObjectProvider<DataSource> dedicated, ObjectProvider<DataSource> application,
			ObjectProvider<PlatformTransactionManager> named, ObjectProvider<PlatformTransactionManager> any) {
		TransactionalRecords records = (type == StoreType.POSTGRES)
				? TransactionalRecords.postgres(jdbc.getTableName(), jdbc.getPostgres().getLockNamespace())
				: TransactionalRecords.mysql(jdbc.getTableName(), jdbc.getMysql().getLockPrefix());
		return new TransactionalClaims(() -> transactionManager(type, named, any),
				schemaDataSource(type, dedicated, application), records, jdbc.getTimeout());
	}

	private static PlatformTransactionManager transactionManager(StoreType type,
			ObjectProvider<PlatformTransactionManager> named, ObjectProvider<PlatformTransactionManager> any) {
		PlatformTransactionManager own = named.getIfAvailable();
		if (own != null) {
			return own;
		}
		PlatformTransactionManager transactionManager = any.getIfUnique();
		if (transactionManager == null) {
			throw new IdempotencyStoreUnavailableException(type,
					"transactional @Idempotent handlers need a PlatformTransactionManager of the DataSource that "
							+ "holds the record table, and the application has none (or several and none is "
							+ "@Primary).",
					"Add org.springframework.boot:spring-boot-starter-jdbc (or -data-jpa), which configures one, or "
							+ "declare a PlatformTransactionManager bean named '" + TRANSACTION_MANAGER_BEAN_NAME
							+ "' for idempo.");
		}
		return transactionManager;
	}

	/**
	 * Checks at start-up, for transactional handlers, that the transaction manager can be
	 * had and manages the record table's data source, where it tells which one it manages
	 * ({@code getDataSource()}, as the JDBC and JPA transaction managers do).
	 */
	public static void verifyTransactional(StoreType type, TransactionalClaims transactional) {
		PlatformTransactionManager transactionManager = transactional.transactionManager();
		Object managed = invokeGetter(transactionManager, "getDataSource");
		if (managed instanceof DataSource dataSource && unwrap(dataSource) != unwrap(transactional.dataSource())) {
			throw new IdempotencyStoreUnavailableException(type,
					"transactional @Idempotent handlers run in a transaction of "
							+ transactionManager.getClass().getName()
							+ ", which manages another DataSource than the one that holds idempo's record table, so "
							+ "the handler's writes and its record would not commit together.",
					"Keep the record table in the application's database (remove the '" + DATA_SOURCE_BEAN_NAME
							+ "' bean), or declare a PlatformTransactionManager of the record table's DataSource "
							+ "named '" + TRANSACTION_MANAGER_BEAN_NAME + "'.");
		}
		if (type == StoreType.MYSQL) {
			// GET_LOCK belongs to the connection: it must still be the transaction's when
			// the transaction has ended, to be released before it goes back to the pool
			Object factory = invokeGetter(transactionManager, "getEntityManagerFactory");
			Object properties = (factory != null) ? invokeGetter(factory, "getProperties") : null;
			Object mode = (properties instanceof java.util.Map<?, ?> map)
					? map.get("hibernate.connection.handling_mode") : null;
			if (mode != null && !String.valueOf(mode).endsWith("_HOLD")) {
				throw new IdempotencyStoreUnavailableException(type,
						"transactional @Idempotent handlers on MySQL/MariaDB need the transaction's connection until "
								+ "the transaction has ended, and hibernate.connection.handling_mode=" + mode
								+ " gives it back to the pool earlier (with its idempotency lock).",
						"Remove spring.jpa.properties.hibernate.connection.handling_mode (Spring's default holds the "
								+ "connection), or set it to DELAYED_ACQUISITION_AND_HOLD.");
			}
		}
	}

	private static @Nullable Object invokeGetter(Object target, String name) {
		Method getter = ReflectionUtils.findMethod(target.getClass(), name);
		if (getter == null || getter.getParameterCount() != 0) {
			return null;
		}
		ReflectionUtils.makeAccessible(getter);
		return ReflectionUtils.invokeMethod(getter, target);
	}

	private static DataSource unwrap(DataSource dataSource) {
		DataSource current = dataSource;
		while (current instanceof DelegatingDataSource delegating && delegating.getTargetDataSource() != null) {
			current = delegating.getTargetDataSource();
		}
		return current;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "idempo.store.type", havingValue = "postgres")
	static class PostgresStoreConfiguration {

		@Bean(TRANSACTIONAL_BEAN_NAME)
		@ConditionalOnClass(PlatformTransactionManager.class)
		@ConditionalOnMissingBean(name = TRANSACTIONAL_BEAN_NAME)
		TransactionalClaims idempotencyTransactional(IdempotencyJdbcStoreProperties properties,
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application,
				@Qualifier(TRANSACTION_MANAGER_BEAN_NAME) ObjectProvider<PlatformTransactionManager> named,
				ObjectProvider<PlatformTransactionManager> any) {
			return transactional(StoreType.POSTGRES, properties, dedicated, application, named, any);
		}

		@Bean
		@ConditionalOnMissingBean(IdempotencyJdbcSchemaInitializer.class)
		IdempotencyJdbcSchemaInitializer idempotencySchemaInitializer(
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application, IdempotencyJdbcSchemaProperties schema,
				IdempotencyJdbcStoreProperties properties) {
			return schemaInitializer(StoreType.POSTGRES, dedicated, application, schema, properties);
		}

		@Bean
		@ConditionalOnMissingBean(LockingStore.class)
		@DependsOnDatabaseInitialization
		JdbcLockingStore idempotencyLockingStore(IdempotencyJdbcStoreProperties properties,
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application) {
			JdbcStoreSettings settings = settings(properties);
			return JdbcLockingStore.postgres(
					lockSessionDataSource(StoreType.POSTGRES, settings, dedicated, application), settings,
					properties.getPostgres().getLockNamespace());
		}

		@Bean
		IdempotencyStoreStartupCheck idempotencyStoreStartupCheck(ObjectProvider<JdbcLockingStore> store,
				IdempotencyProperties properties, IdempotencyJdbcStoreProperties jdbc,
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application) {
			return startupCheck(StoreType.POSTGRES, store.getIfAvailable(), properties, jdbc, dedicated, application);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "idempo.store.type", havingValue = "mysql")
	static class MySqlStoreConfiguration {

		@Bean(TRANSACTIONAL_BEAN_NAME)
		@ConditionalOnClass(PlatformTransactionManager.class)
		@ConditionalOnMissingBean(name = TRANSACTIONAL_BEAN_NAME)
		TransactionalClaims idempotencyTransactional(IdempotencyJdbcStoreProperties properties,
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application,
				@Qualifier(TRANSACTION_MANAGER_BEAN_NAME) ObjectProvider<PlatformTransactionManager> named,
				ObjectProvider<PlatformTransactionManager> any) {
			return transactional(StoreType.MYSQL, properties, dedicated, application, named, any);
		}

		@Bean
		@ConditionalOnMissingBean(IdempotencyJdbcSchemaInitializer.class)
		IdempotencyJdbcSchemaInitializer idempotencySchemaInitializer(
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application, IdempotencyJdbcSchemaProperties schema,
				IdempotencyJdbcStoreProperties properties) {
			return schemaInitializer(StoreType.MYSQL, dedicated, application, schema, properties);
		}

		@Bean
		@ConditionalOnMissingBean(LockingStore.class)
		@DependsOnDatabaseInitialization
		JdbcLockingStore idempotencyLockingStore(IdempotencyJdbcStoreProperties properties,
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application) {
			JdbcStoreSettings settings = settings(properties);
			return JdbcLockingStore.mysql(lockSessionDataSource(StoreType.MYSQL, settings, dedicated, application),
					settings, properties.getMysql().getLockPrefix());
		}

		@Bean
		IdempotencyStoreStartupCheck idempotencyStoreStartupCheck(ObjectProvider<JdbcLockingStore> store,
				IdempotencyProperties properties, IdempotencyJdbcStoreProperties jdbc,
				@Qualifier(DATA_SOURCE_BEAN_NAME) ObjectProvider<DataSource> dedicated,
				ObjectProvider<DataSource> application) {
			return startupCheck(StoreType.MYSQL, store.getIfAvailable(), properties, jdbc, dedicated, application);
		}

	}

}
