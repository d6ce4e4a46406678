package dev.idempo.actuate;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import dev.idempo.web.TestHttp;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code idempo} Actuator endpoint over HTTP: a key's state for a caller scope, no
 * body unless configured, and eviction that lets the next request run the handler.
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=idempo")
class IdempotencyEndpointHttpTest {

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@Test
	void showsTheStateOfAKeyAndEvictsItsRecord() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		String query = "/actuator/idempo?scope=principal:alice&key=" + key;
		assertThat(TestHttp.text(http.send(http.request("GET", query, null)))).contains("\"state\":\"absent\"");
		HttpResponse<byte[]> first = http.post("/t/orders", "{\"item\":\"secret-book\",\"quantity\":1}",
				"Idempotency-Key", key, "Authorization", TestHttp.basic("alice"));
		assertThat(first.statusCode()).isEqualTo(201);
		int executed = this.executions.count("orders");
		String completed = TestHttp.text(http.send(http.request("GET", query, null)));
		assertThat(completed).contains("\"state\":\"completed\"")
			.contains("\"status\":201")
			.contains("\"expiresAt\"")
			.doesNotContain("secret-book");
		assertThat(
				TestHttp.text(http.send(http.request("GET", "/actuator/idempo?scope=principal:bob&key=" + key, null))))
			.as("another caller's scope")
			.contains("\"state\":\"absent\"");
		assertThat(TestHttp.text(http.send(http.request("DELETE", query, null)))).contains("\"evicted\":true");
		assertThat(TestHttp.text(http.send(http.request("GET", query, null)))).contains("\"state\":\"absent\"");
		HttpResponse<byte[]> again = http.post("/t/orders", "{\"item\":\"secret-book\",\"quantity\":1}",
				"Idempotency-Key", key, "Authorization", TestHttp.basic("alice"));
		assertThat(again.statusCode()).isEqualTo(201);
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("orders")).isEqualTo(executed + 1);
	}

}
