package dev.idempo.autoconfigure.store.jdbc;

import dev.idempo.store.jdbc.JdbcStoreSchema;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jdbc.init.DatabaseInitializationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Schema initialisation of the PostgreSQL and MySQL/MariaDB stores
 * ({@code idempo.store.jdbc.initialize-schema}, {@code schema}, {@code platform},
 * {@code continue-on-error}), the way Spring Session JDBC and Spring Batch do it. The
 * other {@code idempo.store.jdbc} properties live in
 * {@link IdempotencyJdbcStoreProperties}; these are kept apart because their type comes
 * from {@code spring-boot-jdbc}, an optional dependency that applications with another
 * store do not have. Checked when bound: a platform without a shipped script fails
 * start-up naming the property.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.store.jdbc")
public class IdempotencyJdbcSchemaProperties extends DatabaseInitializationProperties implements Validator {

	@Override
	public String getDefaultSchemaLocation() {
		return JdbcStoreSchema.PLATFORM_LOCATION;
	}

	@Override
	public boolean supports(Class<?> type) {
		return IdempotencyJdbcSchemaProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		String platform = ((IdempotencyJdbcSchemaProperties) target).getPlatform();
		if (platform != null && !platform.equals("postgresql") && !platform.equals("mysql")) {
			errors.rejectValue("platform", "idempo.store.jdbc.platform",
					"must be 'postgresql' or 'mysql' (also for MariaDB), the platforms of the shipped scripts");
		}
	}

}
