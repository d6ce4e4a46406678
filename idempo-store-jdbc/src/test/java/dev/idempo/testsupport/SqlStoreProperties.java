package dev.idempo.testsupport;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Points an application test at a real SQL server: its DataSource, a SQL store and a
 * table of its own that idempo creates with the shipped script.
 *
 * @author idempo
 */
public final class SqlStoreProperties {

	private SqlStoreProperties() {
	}

	/**
	 * A random table name for one test class.
	 * @return the table name
	 */
	public static String randomTable() {
		return "idempo_http_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
	}

	/**
	 * Registers the properties.
	 * @param registry the registry
	 * @param database the server
	 * @param storeType {@code postgres} or {@code mysql}
	 * @param table the table idempo creates and uses
	 */
	public static void register(DynamicPropertyRegistry registry, TestDatabase database, String storeType,
			String table) {
		// the module's tests exclude DataSourceAutoConfiguration unless they need it
		registry.add("spring.autoconfigure.exclude", () -> "");
		registry.add("spring.datasource.url", database::url);
		if (database.username() != null) {
			registry.add("spring.datasource.username", database::username);
		}
		if (database.password() != null) {
			registry.add("spring.datasource.password", database::password);
		}
		registry.add("idempo.store.type", () -> storeType);
		registry.add("idempo.store.jdbc.table-name", () -> table);
		registry.add("idempo.store.jdbc.initialize-schema", () -> "always");
	}

}
