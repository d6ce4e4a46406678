package dev.idempo.autoconfigure;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempo.autoconfigure.method.IdempotentMethodsConfiguration;
import dev.idempo.autoconfigure.store.jdbc.JdbcStoreConfiguration;
import dev.idempo.autoconfigure.store.redis.IdempotencyRedisStoreProperties;
import dev.idempo.autoconfigure.store.redis.RedisStoreConfiguration;
import dev.idempo.autoconfigure.web.reactive.IdempotencyWebFluxConfiguration;
import dev.idempo.autoconfigure.web.servlet.IdempotencyWebMvcConfiguration;
import dev.idempo.store.LocallyCachedLockingStore;
import dev.idempo.flow.LeaseRenewer;
import dev.idempo.store.LockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Primary;
import org.springframework.util.ClassUtils;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} for idempotency keys: the store, in every application; on Spring
 * MVC handlers annotated with {@link Idempotent} (and the routes of
 * {@code idempo.routes}) in a servlet web application, and on annotated WebFlux handlers
 * (and {@code idempo.routes}) in a reactive one; on bean methods annotated with
 * {@code @Idempotent(key = ...)} and the {@code IdempotencyTemplate}
 * ({@link IdempotentMethodsConfiguration}) with or without a web server.
 *
 * @author idempo
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "idempo.enabled", matchIfMissing = true)
@EnableConfigurationProperties({ IdempotencyProperties.class, IdempotencyMemoryStoreProperties.class,
		IdempotencyRedisStoreProperties.class, IdempotencyLocalCacheProperties.class })
@Import({ IdempotencyAutoConfiguration.MemoryStoreConfiguration.class, RedisStoreConfiguration.class,
		JdbcStoreConfiguration.class, IdempotentMethodsConfiguration.class, IdempotencyWebMvcConfiguration.class,
		IdempotencyWebFluxConfiguration.class, ReactiveStoreConfiguration.class })
@ImportRuntimeHints(IdempotencyRuntimeHints.class)
public final class IdempotencyAutoConfiguration {

	/** The name of the local replay cache's bean, the primary store when enabled. */
	static final String LOCAL_CACHE_BEAN_NAME = "idempotencyLocalCache";

	private static final Log logger = LogFactory.getLog(IdempotencyAutoConfiguration.class);

	/**
	 * Reached only when no store configuration matched: fails start-up with an action
	 * (see {@link IdempotencyFailureAnalyzer}). Bean methods of this class are registered
	 * after those of the imported store configurations, so this sees their stores.
	 * @param properties the properties
	 * @return never returns
	 */
	@Bean
	@ConditionalOnMissingBean(LockingStore.class)
	LockingStore idempotencyUnavailableLockingStore(IdempotencyProperties properties) {
		StoreType type = properties.getStore().getType();
		String name = type.name().toLowerCase(java.util.Locale.ROOT);
		if (type == StoreType.REDIS) {
			// RedisStoreConfiguration creates the store whenever Spring Data Redis is
			// present
			throw new IdempotencyStoreUnavailableException(type,
					"Spring Data Redis (org.springframework.data.redis.connection.RedisConnectionFactory) "
							+ "is not on the classpath.",
					"Add org.springframework.boot:spring-boot-starter-data-redis to your dependencies and "
							+ "configure spring.data.redis.*, or set idempo.store.type to another store.");
		}
		if (type == StoreType.POSTGRES || type == StoreType.MYSQL) {
			String driver = (type == StoreType.POSTGRES) ? "org.postgresql:postgresql"
					: "org.mariadb.jdbc:mariadb-java-client or com.mysql:mysql-connector-j";
			throw new IdempotencyStoreUnavailableException(type,
					"the " + name + " store needs Spring JDBC (spring-jdbc and spring-boot-jdbc), "
							+ "which is not on the class path.",
					"Add org.springframework.boot:spring-boot-starter-jdbc and the JDBC driver (" + driver
							+ "), or set idempo.store.type=memory, or declare your own "
							+ "dev.idempo.store.LockingStore bean.");
		}
		throw new IdempotencyStoreUnavailableException(type,
				"the " + name + " store is not available in this version of idempo.",
				"Set idempo.store.type=memory, or declare your own dev.idempo.store.LockingStore bean.");
	}

	/**
	 * The local replay cache in front of whichever store is configured, when
	 * {@code idempo.local-cache.enabled}: the primary {@link LockingStore}, so that the
	 * web flow, idempotent methods, the template and the endpoint all go through it.
	 * Declared after {@link #idempotencyUnavailableLockingStore}, so that its bean is not
	 * taken for a store.
	 * @param properties the cache's properties
	 * @param beanFactory where the store is found
	 * @return the store with its cache
	 */
	@Bean(LOCAL_CACHE_BEAN_NAME)
	@Primary
	@ConditionalOnBooleanProperty("idempo.local-cache.enabled")
	LocallyCachedLockingStore idempotencyLocalCache(IdempotencyLocalCacheProperties properties,
			ConfigurableListableBeanFactory beanFactory) {
		if (!ClassUtils.isPresent("com.github.benmanes.caffeine.cache.Caffeine", beanFactory.getBeanClassLoader())) {
			throw new IllegalStateException("idempo.local-cache.enabled=true needs Caffeine: add "
					+ "com.github.ben-manes.caffeine:caffeine to your dependencies, or set idempo.local-cache.enabled=false");
		}
		List<String> stores = new ArrayList<>(
				List.of(beanFactory.getBeanNamesForType(LockingStore.class, true, false)));
		stores.remove(LOCAL_CACHE_BEAN_NAME);
		if (stores.size() != 1) {
			throw new IllegalStateException("idempo.local-cache.enabled=true needs exactly one other "
					+ "dev.idempo.store.LockingStore bean to put the cache in front of, but found " + stores);
		}
		return new LocallyCachedLockingStore(beanFactory.getBean(stores.get(0), LockingStore.class),
				properties.getMaximumSize(), properties.getMaxAge(), Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	LeaseRenewer idempotencyLeaseRenewer() {
		return new LeaseRenewer();
	}

	/**
	 * Why transactional handlers and methods cannot run, {@code null} if they can. Looked
	 * up by bean name, so that applications without spring-tx never load its classes.
	 */
	public static @Nullable String transactionalUnavailable(IdempotencyProperties properties,
			ConfigurableBeanFactory beanFactory) {
		StoreType type = properties.getStore().getType();
		if (type != StoreType.POSTGRES && type != StoreType.MYSQL) {
			return "idempo.store.type is " + type.name().toLowerCase(java.util.Locale.ROOT);
		}
		if (!beanFactory.containsBean(JdbcStoreConfiguration.TRANSACTIONAL_BEAN_NAME)) {
			return "Spring's transaction support (spring-tx) or Spring JDBC is not on the class path";
		}
		return null;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "idempo.store.type", havingValue = "memory", matchIfMissing = true)
	static class MemoryStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(LockingStore.class)
		InMemoryLockingStore idempotencyLockingStore(IdempotencyMemoryStoreProperties memory) {
			logger.warn("idempo uses the in-memory store: idempotency keys are protected within this JVM only. "
					+ "Set idempo.store.type to redis, postgres or mysql when more than one instance serves requests.");
			return new InMemoryLockingStore(Clock.systemUTC(), memory.getMaxEntries(), memory.getMaxSize().toBytes(),
					memory.getWhenFull() == IdempotencyMemoryStoreProperties.WhenFull.REFUSE);
		}

	}

}
