package dev.idempo.autoconfigure;

import java.net.URI;
import java.time.Duration;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import dev.idempo.store.LockingStoreException;
import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.store.jdbc.JdbcStoreSettings;
import dev.idempo.store.redis.RedisLockingStore;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.testsupport.TestRedis;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link StoreConnectionFailure} over the failures real servers give the stores' health
 * checks: a database that does not exist, a wrong password, a Redis database index the
 * server does not have are configuration errors; a closed port is an outage.
 *
 * @author idempo
 */
class StoreConnectionFailureTests {

	private static final JdbcStoreSettings SETTINGS = JdbcStoreSettings.defaults().withTimeout(Duration.ofSeconds(2));

	@Test
	void aPostgresDatabaseThatDoesNotExistIsAConfigurationError() {
		TestDatabase database = TestDatabases.postgres();
		StoreConnectionFailure failure = classify(
				postgres(otherDatabase(database.url(), "idempo_no_such_db"), database.username(), database.password()));
		assertThat(failure.permanent()).isTrue();
		assertThat(failure.cause()).contains("idempo_no_such_db");
		assertThat(failure.check()).contains("database named in the URL exists");
	}

	@Test
	void aMariaDbUserWithAWrongPasswordIsAConfigurationError() {
		TestDatabase database = TestDatabases.mysql();
		StoreConnectionFailure failure = classify(mysql(database.url(), "nosuchuser", "wrong"));
		assertThat(failure.permanent()).isTrue();
		assertThat(failure.cause()).contains("nosuchuser");
		assertThat(failure.check()).contains("user name and password");
	}

	@Test
	void aMariaDbDatabaseThatDoesNotExistIsAConfigurationError() {
		TestDatabase database = TestDatabases.mysql();
		StoreConnectionFailure failure = classify(
				mysql(otherDatabase(database.url(), "idempo_no_such_db"), database.username(), database.password()));
		assertThat(failure.permanent()).isTrue();
		assertThat(failure.check()).contains("database named in the URL exists");
	}

	@Test
	void aRecordTableThatDoesNotExistIsAConfigurationError() {
		TestDatabase database = TestDatabases.postgres();
		JdbcLockingStore store = JdbcLockingStore.postgres(
				dataSource(database.url(), database.username(), database.password()),
				SETTINGS.withTableName("idempo_no_such_table"), JdbcLockingStore.DEFAULT_LOCK_NAMESPACE);
		StoreConnectionFailure failure = classify(store);
		assertThat(failure.permanent()).as(failure.cause()).isTrue();
		assertThat(failure.check()).contains("initialize-schema");
	}

	@Test
	void aClosedPortIsAnOutageForEveryStore() {
		int port = TestRedis.freePort();
		TestDatabase postgres = TestDatabases.postgres();
		TestDatabase mysql = TestDatabases.mysql();
		assertThat(classify(postgres(onPort(postgres.url(), port), postgres.username(), postgres.password())))
			.returns(false, StoreConnectionFailure::permanent);
		assertThat(classify(mysql(onPort(mysql.url(), port), mysql.username(), mysql.password()))).returns(false,
				StoreConnectionFailure::permanent);
		assertThat(classifyRedis(redis(port, null, null, 0))).returns(false, StoreConnectionFailure::permanent);
	}

	@Test
	void aRedisUserAndPasswordTheServerDoesNotAcceptIsAConfigurationError() {
		// a password alone, on a server without one, is no error for Lettuce: its
		// handshake goes on after "ERR AUTH <password> called without any password
		// configured", and the store works
		int port = URI.create(TestRedis.server().url()).getPort();
		StoreConnectionFailure failure = classifyRedis(redis(port, "nosuchuser", "idempo-wrong-password", 0));
		assertThat(failure.permanent()).as(failure.cause()).isTrue();
		assertThat(failure.cause()).contains("WRONGPASS");
		assertThat(failure.check()).contains("user name and password");
	}

	@Test
	void aRedisDatabaseIndexTheServerDoesNotHaveIsAConfigurationError() {
		int port = URI.create(TestRedis.server().url()).getPort();
		StoreConnectionFailure failure = classifyRedis(redis(port, null, null, 9999));
		assertThat(failure.permanent()).as(failure.cause()).isTrue();
		assertThat(failure.check()).contains("spring.data.redis.database");
	}

	@Test
	void theStartUpMessageSaysWhatToDo() {
		StoreConnectionFailure outage = new StoreConnectionFailure(false, "ConnectException: Connection refused", "");
		assertThat(outage.startupMessage("redis", "127.0.0.1:1, database 0", false)).isEqualTo(
				"idempo's redis store at 127.0.0.1:1, database 0 cannot be reached at start-up (ConnectException: "
						+ "Connection refused); the store is unreachable now; requests get 503 until it answers");
		assertThat(outage.startupMessage("redis", "127.0.0.1:1", true))
			.endsWith("requests run unprotected (idempo.store-failure.mode=fail-open) until it answers");
		StoreConnectionFailure permanent = new StoreConnectionFailure(true, "no such database", "the URL");
		assertThat(permanent.startupMessage("postgres", "jdbc:postgresql://h/db", false))
			.endsWith("(no such database); this looks like a configuration error that will not go away by itself: "
					+ "check the URL");
	}

	private static StoreConnectionFailure classify(JdbcLockingStore store) {
		try (store) {
			return StoreConnectionFailure
				.classify(catchThrowableOfType(LockingStoreException.class, store::checkHealth));
		}
	}

	private static StoreConnectionFailure classifyRedis(LettuceConnectionFactory factory) {
		try {
			RedisLockingStore store = new RedisLockingStore(factory);
			return StoreConnectionFailure
				.classify(catchThrowableOfType(LockingStoreException.class, store::checkHealth));
		}
		finally {
			factory.destroy();
		}
	}

	private static JdbcLockingStore postgres(String url, String username, String password) {
		return JdbcLockingStore.postgres(dataSource(url, username, password), SETTINGS,
				JdbcLockingStore.DEFAULT_LOCK_NAMESPACE);
	}

	private static JdbcLockingStore mysql(String url, String username, String password) {
		return JdbcLockingStore.mysql(dataSource(url, username, password), SETTINGS,
				JdbcLockingStore.DEFAULT_LOCK_PREFIX);
	}

	private static DataSource dataSource(String url, String username, String password) {
		return new DriverManagerDataSource(url, (username != null) ? username : "", (password != null) ? password : "");
	}

	private static String otherDatabase(String url, String name) {
		return url.replaceFirst("(//[^/]+)/[^?;]*", "$1/" + name);
	}

	private static String onPort(String url, int port) {
		return url.replaceFirst("//([^/:]+)(:\\d+)?/", "//$1:" + port + "/");
	}

	private static LettuceConnectionFactory redis(int port, String username, String password, int database) {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration("127.0.0.1", port);
		configuration.setUsername(username);
		configuration.setPassword(password);
		configuration.setDatabase(database);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

}
