package dev.idempo.store.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.util.Assert;

/**
 * The shipped schema scripts ({@code schema-postgresql.sql}, {@code schema-mysql.sql}),
 * written for the table {@value #DEFAULT_TABLE_NAME}, and their adaptation to another.
 *
 * @author idempo
 */
public final class JdbcStoreSchema {

	/** The PostgreSQL script, as a class path location. */
	public static final String POSTGRESQL_LOCATION = "classpath:dev/idempo/store/jdbc/schema-postgresql.sql";

	/** The MySQL and MariaDB script, as a class path location. */
	public static final String MYSQL_LOCATION = "classpath:dev/idempo/store/jdbc/schema-mysql.sql";

	/**
	 * The schema location with Spring Boot's {@code @@platform@@} placeholder, resolved
	 * to {@code postgresql} or {@code mysql}.
	 */
	public static final String PLATFORM_LOCATION = "classpath:dev/idempo/store/jdbc/schema-@@platform@@.sql";

	/** The table name written in the shipped schema scripts. */
	static final String DEFAULT_TABLE_NAME = "idempo_responses";

	private static final String DEFAULT_INDEX_NAME = DEFAULT_TABLE_NAME + "_expires_at_idx";

	private static final int MAX_NAME_LENGTH = 48;

	/** The default index and table names as whole identifiers, the longer first. */
	private static final Pattern DEFAULT_NAMES = Pattern
		.compile("\\b(?:" + DEFAULT_INDEX_NAME + "|" + DEFAULT_TABLE_NAME + ")\\b");

	private static final Pattern TABLE_NAME = Pattern
		.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0," + (MAX_NAME_LENGTH - 1) + "}");

	private JdbcStoreSchema() {
	}

	/**
	 * Checks that {@code tableName}, written into SQL text, is a plain identifier,
	 * optionally schema-qualified, short enough for its index name.
	 * @param tableName the table name
	 * @return the table name
	 */
	public static String checkTableName(String tableName) {
		Assert.isTrue(tableName != null && TABLE_NAME.matcher(tableName).matches(),
				() -> "Table name '" + tableName
						+ "' must be an identifier of letters, digits and underscores (at most " + MAX_NAME_LENGTH
						+ " characters), optionally qualified by a schema");
		return tableName;
	}

	/**
	 * Adapts a script written for the default table to {@code tableName}, renaming the
	 * table and its index (after the table, without its schema); whole identifiers only.
	 * @param script the script text
	 * @param tableName the table name
	 * @return the adapted script
	 */
	public static String render(String script, String tableName) {
		checkTableName(tableName);
		String simpleName = tableName.substring(tableName.indexOf('.') + 1);
		String indexName = simpleName + "_expires_at_idx";
		// one pass, so that nothing replaced is replaced again
		return DEFAULT_NAMES.matcher(script)
			.replaceAll((match) -> Matcher
				.quoteReplacement(DEFAULT_INDEX_NAME.equals(match.group()) ? indexName : tableName));
	}

	/**
	 * Reads a shipped script and adapts it to {@code tableName}.
	 * @param platform {@code postgresql} or {@code mysql}
	 * @param tableName the table name
	 * @return the script text
	 */
	public static String script(String platform, String tableName) {
		Assert.isTrue("postgresql".equals(platform) || "mysql".equals(platform),
				"'platform' must be postgresql or mysql");
		String name = "schema-" + platform + ".sql";
		try (InputStream in = JdbcStoreSchema.class.getResourceAsStream(name)) {
			Assert.state(in != null, () -> "Missing " + name + " beside " + JdbcStoreSchema.class.getName());
			return render(new String(in.readAllBytes(), StandardCharsets.UTF_8), tableName);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
