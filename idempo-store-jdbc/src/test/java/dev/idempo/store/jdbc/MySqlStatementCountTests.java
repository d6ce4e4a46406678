package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * {@link StatementCountTests} on MySQL or MariaDB through the MariaDB driver with
 * multi-statements allowed; also prints the lock session's own server counters.
 *
 * @author idempo
 */
class MySqlStatementCountTests extends StatementCountTests {

	@Override
	TestDatabase database() {
		return TestDatabases.mysql();
	}

	@Override
	String platform() {
		return "mysql";
	}

	@Override
	DataSource dataSource(TestDatabase database) {
		Properties properties = new Properties();
		properties.setProperty("allowMultiQueries", "true");
		return database.dataSource(properties);
	}

	@Override
	JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings) {
		return JdbcLockingStore.mysql(dataSource, settings, JdbcLockingStore.DEFAULT_LOCK_PREFIX);
	}

	@Override
	Cost freshKey() {
		// claim: GET_LOCK, read; complete: store (auto-committed), unlock
		return new Cost(4, 2, 1);
	}

	@Override
	Cost replay() {
		// claim: GET_LOCK (not taken: a record exists), read
		return new Cost(2, 1, 0);
	}

	@Override
	Cost freshKeysBatched() {
		// claims: GET_LOCK, read; completes: START TRANSACTION, a store per key, COMMIT,
		// unlock
		return new Cost(5 + CALLERS, 2, 1);
	}

	@Override
	Cost replaysBatched() {
		return new Cost(2, 1, 0);
	}

	@Override
	@Nullable Map<String, Long> serverCounters() {
		Runnable letGo = store().occupySession(0);
		try {
			Connection connection = store().session(0).connection().unwrap(Connection.class);
			Map<String, Long> counters = new HashMap<>();
			try (PreparedStatement statement = connection.prepareStatement("SHOW SESSION STATUS WHERE Variable_name"
					+ " LIKE 'Com\\_%' OR Variable_name IN ('Handler_commit', 'Handler_rollback', 'Questions')");
					ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					counters.put(result.getString(1), result.getLong(2));
				}
			}
			return counters;
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			letGo.run();
		}
	}

}
