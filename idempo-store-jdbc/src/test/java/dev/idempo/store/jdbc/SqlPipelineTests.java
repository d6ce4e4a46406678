package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.idempo.store.jdbc.SqlPipeline.Answers;
import dev.idempo.store.jdbc.SqlPipeline.Result;
import dev.idempo.store.jdbc.SqlPipeline.Script;
import dev.idempo.store.jdbc.SqlPipeline.Sql;
import dev.idempo.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link SqlPipeline} on a real PostgreSQL server, sent together and one by
 * one.
 *
 * @author idempo
 */
class SqlPipelineTests {

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void answersAreReadByTheNamesOfTheirSteps(boolean together) throws Exception {
		try (Connection connection = TestDatabases.postgres().connect()) {
			Answers answers = new Script().add("one", new Sql("SELECT ?::int", 1))
				.add("many", new Sql("SELECT 2"))
				.add("many", new Sql("SELECT 3 UNION ALL SELECT 4"))
				.run(connection, together, 5);
			assertThat(answers.one("one").firstRow()).containsExactly(1);
			List<Result> many = answers.all("many");
			assertThat(many).hasSize(2);
			assertThat(many.get(1).rows()).hasSize(2);
			assertThat(answers.all("none")).isEmpty();
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> answers.one("many"));
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> answers.one("none"));
		}
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void theFirstFailingStatementEndsTheRunAfterTheOnesBeforeIt(boolean together) throws Exception {
		try (Connection connection = TestDatabases.postgres().connect()) {
			connection.setAutoCommit(true);
			SqlPipeline.run(connection, false, 5, List.of(new Sql("CREATE TEMPORARY TABLE pipeline_test (n int)")));
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> SqlPipeline.run(connection, together, 5,
					List.of(new Sql("INSERT INTO pipeline_test VALUES (1)"), new Sql("SELECT 1/0"),
							new Sql("INSERT INTO pipeline_test VALUES (2)"))));
			List<Result> rows = SqlPipeline.run(connection, false, 5,
					List.of(new Sql("SELECT n FROM pipeline_test ORDER BY n")));
			// nothing after the failure ran (sent together, what ran before it may be
			// rolled back with it, as one implicit transaction)
			assertThat(rows.get(0).rows()).noneMatch((row) -> Integer.valueOf(2).equals(row[0]));
			if (!together) {
				assertThat(rows.get(0).rows()).hasSize(1);
			}
		}
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void updatesAnswerTheirCountAndBytesComeBackAsBytes(boolean together) throws Exception {
		try (Connection connection = TestDatabases.postgres().connect()) {
			List<Result> results = SqlPipeline.run(connection, together, 5,
					List.of(new Sql("CREATE TEMPORARY TABLE bytes_test (b bytea)"),
							new Sql("INSERT INTO bytes_test VALUES (?)", (Object) new byte[] { 1, 2 }),
							new Sql("SELECT b FROM bytes_test")));
			assertThat(results.get(1).updateCount()).isEqualTo(1);
			assertThat(results.get(2).firstRow()[0]).isEqualTo(new byte[] { 1, 2 });
		}
	}

}
