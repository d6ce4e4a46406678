package dev.idempo.web.transactional;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.web.RequestFingerprint;
import dev.idempo.web.TestHttp;
import dev.idempo.web.transactional.app.TransactionalTestApplication;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A transactional handler never runs unprotected, even where
 * {@code idempo.store-failure.mode=fail-open} lets plain handlers do so: its writes would
 * commit without the record that stops a second execution. Here the store answers, but
 * with a record that cannot be read.
 */
@SpringBootTest(classes = TransactionalTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class PostgresFailOpenTransactionalHttpTests {

	static final TransactionalSetup SETUP = new TransactionalSetup(TestDatabases::postgres, true, false,
			Map.of("idempo.store-failure.mode", "fail-open"));

	@LocalServerPort
	int port;

	@Value("${test.payments-table}")
	String paymentsTable;

	@Value("${idempo.store.jdbc.table-name}")
	String recordTable;

	TestHttp http;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		SETUP.register(registry);
	}

	@BeforeAll
	static void createTables() {
		SETUP.createTables();
	}

	@AfterAll
	static void dropTables() {
		SETUP.dropTables();
	}

	@BeforeEach
	void setUp() {
		this.http = new TestHttp(this.port);
	}

	@Test
	void anUnreadableRecordIsRefusedWithoutRunningTheHandler() {
		String key = TestHttp.newKey();
		String reference = TestHttp.newKey();
		assertThat(post(key, reference).statusCode()).isEqualTo(201);
		int corrupted = SETUP.database()
			.jdbc()
			.update("UPDATE " + this.recordTable + " SET response = ? WHERE storage_key = ?",
					new byte[] { 0x7f, 0x00, 0x01 }, RequestFingerprint.storageKey("anonymous", key));
		assertThat(corrupted).isOne();

		HttpResponse<byte[]> retry = post(key, reference);

		assertThat(retry.statusCode()).as(TestHttp.text(retry)).isEqualTo(503);
		assertThat(TestHttp.text(retry)).contains("store-unavailable");
		assertThat(payments(reference)).isOne();
	}

	private HttpResponse<byte[]> post(String key, String reference) {
		return this.http.post("/tx/jdbc/payments", "{\"amount\":1}",
				List.of("Idempotency-Key", key, "X-Reference", reference).toArray(String[]::new));
	}

	private int payments(String reference) {
		Integer count = SETUP.database()
			.jdbc()
			.queryForObject("SELECT COUNT(*) FROM " + this.paymentsTable + " WHERE reference = ?", Integer.class,
					reference);
		return (count != null) ? count : -1;
	}

}
