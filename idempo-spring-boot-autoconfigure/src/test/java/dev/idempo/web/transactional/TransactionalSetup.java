package dev.idempo.web.transactional;

import java.util.Map;
import java.util.function.Supplier;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * What one transactional test class runs against: a server (through which driver), the
 * store type, whether JPA runs, and extra properties; with the class's own random record
 * and payment tables.
 */
final class TransactionalSetup {

	static final String HIBERNATE = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration";

	private final Supplier<TestDatabase> server;

	private final boolean postgres;

	private final boolean jpa;

	private final Map<String, String> properties;

	private final String table = SqlStoreProperties.randomTable();

	private final String payments = "payments_" + this.table;

	TransactionalSetup(Supplier<TestDatabase> server, boolean postgres, boolean jpa, Map<String, String> properties) {
		this.server = server;
		this.postgres = postgres;
		this.jpa = jpa;
		this.properties = properties;
	}

	TestDatabase database() {
		return this.server.get();
	}

	boolean jpa() {
		return this.jpa;
	}

	void register(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, database(), this.postgres ? "postgres" : "mysql", this.table);
		registry.add("test.payments-table", () -> this.payments);
		registry.add("test.jpa", () -> Boolean.toString(this.jpa));
		registry.add("idempo.max-response-size", () -> "2KB");
		if (!this.jpa) {
			registry.add("spring.autoconfigure.exclude", () -> HIBERNATE);
		}
		this.properties.forEach((name, value) -> registry.add(name, () -> value));
	}

	void createTables() {
		database().jdbc()
			.execute(this.postgres
					? "CREATE TABLE " + this.payments
							+ " (id BIGSERIAL PRIMARY KEY, reference VARCHAR(64) NOT NULL, body TEXT)"
					: "CREATE TABLE " + this.payments
							+ " (id BIGINT AUTO_INCREMENT PRIMARY KEY, reference VARCHAR(64) NOT NULL, body TEXT)");
	}

	void dropTables() {
		database().dropTable(this.payments);
		database().dropTable(this.table);
	}

	/** Ends a database session from another one. */
	void kill(long session) {
		JdbcTemplate admin = database().jdbc();
		if (this.postgres) {
			admin.queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, (int) session);
		}
		else {
			admin.execute("KILL " + session);
		}
	}

}
