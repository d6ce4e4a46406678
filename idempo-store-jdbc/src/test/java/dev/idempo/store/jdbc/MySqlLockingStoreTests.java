package dev.idempo.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Properties;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.Lease;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The contract and the SQL store tests on a real MySQL or MariaDB server through the
 * MariaDB driver, with multi-statements allowed (each operation one round trip).
 *
 * @author idempo
 */
class MySqlLockingStoreTests extends JdbcLockingStoreTests {

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
	void killSessionHolding(JdbcLockingStore store, Lease lease) {
		String name = lockName(store, lease.key());
		JdbcTemplate jdbc = database().jdbc();
		Long holder = jdbc.queryForObject("SELECT IS_USED_LOCK(?)", Long.class, name);
		assertThat(holder).as("session holding %s", name).isNotNull();
		jdbc.execute("KILL CONNECTION " + holder.longValue());
		await().atMost(Duration.ofSeconds(10))
			.until(() -> !holder.equals(jdbc.queryForObject("SELECT IS_USED_LOCK(?)", Long.class, name)));
	}

	@Override
	long idleTimeoutSeconds(Connection connection) throws Exception {
		try (PreparedStatement statement = connection.prepareStatement("SELECT @@session.wait_timeout");
				ResultSet result = statement.executeQuery()) {
			assertThat(result.next()).isTrue();
			return result.getLong(1);
		}
	}

	@Test
	void lockNamesArePrefixedDigestsOfAtMost64Characters() throws Exception {
		JdbcLockingStore store = (JdbcLockingStore) store();
		String key = newKey();
		Lease lease = acquire(key);
		String name = lockName(store, key);
		assertThat(name).hasSize(64).startsWith(JdbcLockingStore.DEFAULT_LOCK_PREFIX).doesNotContain(key);
		assertThat(store.release(lease)).isTrue();
		try (Connection application = database().connect();
				PreparedStatement statement = application.prepareStatement("SELECT GET_LOCK(?, 0)")) {
			statement.setString(1, name);
			statement.execute();
			assertThat(store.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.InProgress.class);
		}
		awaitAcquired(key);
	}

	@Test
	void anotherPrefixIsAnotherLock() {
		String key = newKey();
		acquire(key);
		JdbcLockingStore other = JdbcLockingStore.mysql(dataSource(), settings(), "other-app:");
		try {
			assertThat(other.claim(key, LOCK_TTL)).isInstanceOf(ClaimResult.Acquired.class);
			assertThat(lockName(other, key)).hasSize(64).startsWith("other-app:");
		}
		finally {
			other.close();
		}
	}

	@Test
	void multiStatementsAreDetectedPerConnection() throws Exception {
		Properties properties = new Properties();
		properties.setProperty("allowMultiQueries", "true");
		try (Connection multi = database().dataSource(properties).getConnection();
				Connection single = database().connect()) {
			assertThat(MySqlDialect.allowsMultiStatements(multi, 5)).isTrue();
			assertThat(MySqlDialect.allowsMultiStatements(single, 5)).isFalse();
		}
	}

	/**
	 * The lock name of {@code key} in the test database, as {@code store} derives it.
	 */
	private String lockName(JdbcLockingStore store, String key) {
		String current = database().jdbc().queryForObject("SELECT DATABASE()", String.class);
		return ((MySqlDialect) store.dialect()).lockName((current != null) ? current : "", key);
	}

}
