package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * Runs a few SQL statements in one round trip: sent together as one multi-statement
 * prepared statement where the driver allows it (always with PostgreSQL's driver; with
 * MySQL's and MariaDB's when the connection allows multi-queries), else one after the
 * other. Either way each statement sees what the ones before it did, and the first one
 * that fails ends the run. Values are always bound, never written into SQL text.
 *
 * @author idempo
 */
final class SqlPipeline {

	private SqlPipeline() {
	}

	/**
	 * Runs the statements.
	 * @param connection the connection
	 * @param together whether to send all statements in one round trip
	 * @param timeoutSeconds the statement timeout
	 * @param statements the statements
	 * @return one result per statement
	 * @throws SQLException if a statement fails
	 */
	static List<Result> run(Connection connection, boolean together, int timeoutSeconds, Sql... statements)
			throws SQLException {
		if (together || statements.length == 1) {
			String sql = Arrays.stream(statements).map(Sql::text).collect(Collectors.joining(";\n"));
			Object[] parameters = Arrays.stream(statements)
				.flatMap((statement) -> Arrays.stream(statement.parameters()))
				.toArray();
			return execute(connection, timeoutSeconds, sql, parameters, statements.length);
		}
		List<Result> results = new ArrayList<>(statements.length);
		for (Sql statement : statements) {
			results.addAll(execute(connection, timeoutSeconds, statement.text(), statement.parameters(), 1));
		}
		return results;
	}

	/**
	 * Runs the statements.
	 * @param connection the connection
	 * @param together whether to send all statements in one round trip
	 * @param timeoutSeconds the statement timeout
	 * @param statements the statements
	 * @return one result per statement
	 * @throws SQLException if a statement fails
	 */
	static List<Result> run(Connection connection, boolean together, int timeoutSeconds, List<Sql> statements)
			throws SQLException {
		return run(connection, together, timeoutSeconds, statements.toArray(new Sql[0]));
	}

	private static List<Result> execute(Connection connection, int timeoutSeconds, String sql, Object[] parameters,
			int expected) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			statement.setQueryTimeout(timeoutSeconds);
			for (int i = 0; i < parameters.length; i++) {
				statement.setObject(i + 1, parameters[i]);
			}
			List<Result> results = new ArrayList<>(expected);
			boolean isResultSet = statement.execute();
			while (true) {
				if (isResultSet) {
					try (ResultSet resultSet = statement.getResultSet()) {
						results.add(new Result(-1, rows(resultSet)));
					}
				}
				else {
					int count = statement.getUpdateCount();
					if (count == -1) {
						break;
					}
					results.add(new Result(count, List.of()));
				}
				isResultSet = statement.getMoreResults();
			}
			if (results.size() != expected) {
				throw new SQLException("Expected " + expected + " results but got " + results.size());
			}
			return results;
		}
	}

	private static List<@Nullable Object[]> rows(ResultSet resultSet) throws SQLException {
		ResultSetMetaData metaData = resultSet.getMetaData();
		int columns = metaData.getColumnCount();
		List<@Nullable Object[]> rows = new ArrayList<>(1);
		while (resultSet.next()) {
			@Nullable Object[] row = new Object[columns];
			for (int column = 1; column <= columns; column++) {
				row[column - 1] = switch (metaData.getColumnType(column)) {
					// some drivers answer getObject with a Blob for these
					case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> resultSet.getBytes(column);
					default -> resultSet.getObject(column);
				};
			}
			rows.add(row);
		}
		return rows;
	}

	/**
	 * One SQL statement and its parameters.
	 *
	 * @param text the SQL text, with {@code ?} for each parameter
	 * @param parameters the parameters
	 */
	record Sql(String text, Object... parameters) {

	}

	/**
	 * What one statement answered.
	 *
	 * @param updateCount the update count, or -1 for a query
	 * @param rows the rows of a query, empty for an update
	 */
	record Result(long updateCount, List<@Nullable Object[]> rows) {

		@Nullable Object @Nullable [] firstRow() {
			return this.rows.isEmpty() ? null : this.rows.get(0);
		}

	}

}
