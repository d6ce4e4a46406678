package dev.idempo.web.cache;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.idempo.store.LocallyCachedLockingStore;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestDatabases;
import dev.idempo.web.TestHttp;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local replay cache on PostgreSQL, whose every connection (the store's lock sessions
 * and the application's pool) goes through a {@link TcpProxy}: with the proxy
 * black-holed, a record this instance stored is still replayed (no statement reaches the
 * database) and a retry with another body still gets 422, while a new key's claim fails
 * closed (503). Without the cache the replay would wait for the database and fail with
 * 503 too.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "idempo.local-cache.enabled=true")
class PostgresLocalCacheHttpTests {

	private static final String TABLE = SqlStoreProperties.randomTable();

	private static final TcpProxy proxy = TestDatabases.postgres().proxy();

	private static final String ORDER = "{\"item\":\"book\",\"quantity\":1}";

	@LocalServerPort
	private int port;

	@Autowired
	private LocallyCachedLockingStore cache;

	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		SqlStoreProperties.register(registry, TestDatabases.postgres().through(proxy), "postgres", TABLE);
		registry.add("idempo.store.jdbc.timeout", () -> "1s");
		registry.add("idempo.store.jdbc.network-timeout", () -> "2s");
		registry.add("spring.datasource.hikari.connection-timeout", () -> "2000");
	}

	@AfterAll
	static void cleanUp() {
		proxy.close();
		TestDatabases.postgres().dropTable(TABLE);
	}

	@AfterEach
	void heal() {
		proxy.forward();
	}

	@Test
	void aReplayOfARecordThisInstanceStoredNeedsNoDatabase() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = http.postWithKey("/t/orders", key, ORDER);
		assertThat(first.statusCode()).isEqualTo(201);
		long hits = this.cache.hits();

		proxy.blackHole();
		HttpResponse<byte[]> replay = http.postWithKey("/t/orders", key, ORDER);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(http.postWithKey("/t/orders", key, "{\"item\":\"pen\",\"quantity\":2}").statusCode()).isEqualTo(422);
		assertThat(this.cache.hits() - hits).isEqualTo(2);
		assertThat(http.postWithKey("/t/orders", TestHttp.newKey(), ORDER).statusCode()).isEqualTo(503);
	}

}
