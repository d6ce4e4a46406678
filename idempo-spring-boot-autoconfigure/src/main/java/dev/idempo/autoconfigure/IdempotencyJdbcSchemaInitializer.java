package dev.idempo.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import dev.idempo.store.jdbc.JdbcStoreSchema;

import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.boot.jdbc.init.PropertiesBasedDataSourceScriptDatabaseInitializer;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.Resource;

/**
 * Runs the schema script of the PostgreSQL or MySQL/MariaDB store
 * ({@code schema-postgresql.sql} or {@code schema-mysql.sql}, MariaDB using the MySQL
 * one) when {@code idempo.store.jdbc.initialize-schema} asks for it, adapted to the
 * configured table name.
 *
 * @author idempo
 */
public class IdempotencyJdbcSchemaInitializer
		extends PropertiesBasedDataSourceScriptDatabaseInitializer<IdempotencyJdbcSchemaProperties> {

	private final String tableName;

	/**
	 * Creates an initializer.
	 * @param dataSource the data source the script runs on
	 * @param properties the initialisation properties
	 * @param tableName the configured table name
	 */
	public IdempotencyJdbcSchemaInitializer(DataSource dataSource, IdempotencyJdbcSchemaProperties properties,
			String tableName) {
		super(dataSource, properties, Map.of(DatabaseDriver.MARIADB, "mysql"));
		this.tableName = JdbcStoreSchema.checkTableName(tableName);
	}

	@Override
	protected void runScripts(Scripts scripts) {
		Charset encoding = (scripts.getEncoding() != null) ? scripts.getEncoding() : StandardCharsets.UTF_8;
		List<Resource> rendered = new ArrayList<>();
		for (Resource script : scripts) {
			try {
				String text = JdbcStoreSchema.render(script.getContentAsString(encoding), this.tableName);
				rendered.add(new ByteArrayResource(text.getBytes(encoding), script.getDescription()));
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not read " + script, ex);
			}
		}
		super.runScripts(new Scripts(rendered).continueOnError(scripts.isContinueOnError())
			.separator(scripts.getSeparator())
			.encoding(encoding));
	}

}
