package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

import org.jspecify.annotations.Nullable;

/**
 * Runs a few SQL statements in one round trip where the driver allows it, else one after
 * the other; the first that fails ends the run. Values are always bound.
 *
 * @author idempo
 */
final class SqlPipeline {

	private SqlPipeline() {
	}

	/** Runs the statements; lock sessions set their timeout on the server (0 here). */
	static List<Result> run(Connection connection, boolean together, int timeoutSeconds, List<Sql> statements)
			throws SQLException {
		int count = statements.size();
		if (count == 1) {
			Sql statement = statements.get(0);
			return execute(connection, timeoutSeconds, statement.text(), statement.parameters(), 1);
		}
		if (together) {
			StringJoiner sql = new StringJoiner(";\n");
			List<Object> values = new ArrayList<>();
			for (Sql statement : statements) {
				sql.add(statement.text());
				values.addAll(Arrays.asList(statement.parameters()));
			}
			return execute(connection, timeoutSeconds, sql.toString(), values.toArray(), count);
		}
		List<Result> results = new ArrayList<>(count);
		for (Sql statement : statements) {
			results.addAll(execute(connection, timeoutSeconds, statement.text(), statement.parameters(), 1));
		}
		return results;
	}

	private static List<Result> execute(Connection connection, int timeoutSeconds, String sql, Object[] parameters,
			int expected) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			if (timeoutSeconds > 0) {
				statement.setQueryTimeout(timeoutSeconds);
			}
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
		boolean[] binary = new boolean[columns];
		for (int column = 1; column <= columns; column++) {
			// some drivers answer getObject with a Blob for these
			binary[column - 1] = switch (metaData.getColumnType(column)) {
				case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> true;
				default -> false;
			};
		}
		List<@Nullable Object[]> rows = new ArrayList<>(1);
		while (resultSet.next()) {
			@Nullable Object[] row = new Object[columns];
			for (int column = 1; column <= columns; column++) {
				row[column - 1] = binary[column - 1] ? resultSet.getBytes(column) : resultSet.getObject(column);
			}
			rows.add(row);
		}
		return rows;
	}

	/** Statements to run in one round trip, whose results are read back by step name. */
	static final class Script {

		private final List<String> names = new ArrayList<>();

		private final List<Sql> statements = new ArrayList<>();

		/** Adds a statement; several may share a name. */
		Script add(String name, Sql statement) {
			this.names.add(name);
			this.statements.add(statement);
			return this;
		}

		Answers run(Connection connection, boolean together, int timeoutSeconds) throws SQLException {
			List<Result> results = SqlPipeline.run(connection, together, timeoutSeconds, this.statements);
			Map<String, List<Result>> byName = new HashMap<>();
			for (int i = 0; i < results.size(); i++) {
				byName.computeIfAbsent(this.names.get(i), (name) -> new ArrayList<>(1)).add(results.get(i));
			}
			return new Answers(byName);
		}

	}

	/** The results of a {@link Script}, by step name, in the order they were added. */
	record Answers(Map<String, List<Result>> byName) {

		List<Result> all(String name) {
			return this.byName.getOrDefault(name, List.of());
		}

		Result one(String name) throws SQLException {
			List<Result> results = all(name);
			if (results.size() != 1) {
				throw new SQLException("Expected one result of " + name + " but got " + results.size());
			}
			return results.get(0);
		}

	}

	record Sql(String text, Object... parameters) {

	}

	/** What one statement answered: an update count, or -1 and the rows. */
	record Result(long updateCount, List<@Nullable Object[]> rows) {

		@Nullable Object @Nullable [] firstRow() {
			return this.rows.isEmpty() ? null : this.rows.get(0);
		}

	}

}
