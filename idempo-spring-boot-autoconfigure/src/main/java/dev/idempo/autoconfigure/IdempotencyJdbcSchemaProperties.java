package dev.idempo.autoconfigure;

import dev.idempo.store.jdbc.JdbcStoreSchema;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jdbc.init.DatabaseInitializationProperties;

/**
 * Schema initialisation of the PostgreSQL and MySQL/MariaDB stores
 * ({@code idempo.store.jdbc.initialize-schema}, {@code schema}, {@code platform},
 * {@code continue-on-error}), the way Spring Session JDBC and Spring Batch do it. The
 * other {@code idempo.store.jdbc} properties live in
 * {@link IdempotencyJdbcStoreProperties}; these are kept apart because their type comes
 * from {@code spring-boot-jdbc}, an optional dependency that applications with another
 * store do not have.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.store.jdbc")
public class IdempotencyJdbcSchemaProperties extends DatabaseInitializationProperties {

	@Override
	public String getDefaultSchemaLocation() {
		return JdbcStoreSchema.PLATFORM_LOCATION;
	}

}
