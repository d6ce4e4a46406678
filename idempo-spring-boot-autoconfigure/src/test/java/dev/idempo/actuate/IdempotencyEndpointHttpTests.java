package dev.idempo.actuate;

import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 * body unless configured, and eviction that lets the next request run the handler. The
 * caller is selected by what support has: the scope, the principal's name or the raw
 * {@code Authorization} value. On the memory store here, on PostgreSQL in
 * {@link PostgresIdempotencyEndpointHttpTests}.
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=idempo")
class IdempotencyEndpointHttpTests {

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

	@Test
	void findsAndEvictsTheRecordOfAnAuthenticatedCallerByTheirName() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		assertThat(http
			.post("/t/orders", "{\"item\":\"book\",\"quantity\":1}", "Idempotency-Key", key, "Authorization",
					TestHttp.basic("bob"))
			.statusCode()).isEqualTo(201);
		String byName = "/actuator/idempo?principal=bob&key=" + key;
		assertThat(TestHttp.text(http.send(http.request("GET", byName, null)))).contains("\"state\":\"completed\"")
			.contains("\"scope\":\"principal:bob\"");
		assertThat(TestHttp.text(http.send(http.request("GET", "/actuator/idempo?principal=alice&key=" + key, null))))
			.contains("\"state\":\"absent\"");
		assertThat(TestHttp.text(http.send(http.request("DELETE", byName, null)))).contains("\"evicted\":true");
		assertThat(TestHttp.text(http.send(http.request("GET", byName, null)))).contains("\"state\":\"absent\"");
	}

	@Test
	void findsAndEvictsTheRecordOfAnUnauthenticatedCallerByTheirAuthorizationValue() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		// not a scheme the application authenticates: the caller has no principal, so
		// the scope is the header's digest
		String token = "Bearer " + TestHttp.newKey();
		assertThat(http
			.post("/t/orders", "{\"item\":\"pen\",\"quantity\":2}", "Idempotency-Key", key, "Authorization", token)
			.statusCode()).isEqualTo(201);
		String byAuthorization = "/actuator/idempo?key=" + key + "&authorization="
				+ URLEncoder.encode(token, StandardCharsets.UTF_8);
		String found = TestHttp.text(http.send(http.request("GET", byAuthorization, null)));
		assertThat(found).contains("\"state\":\"completed\"").contains("\"status\":201").doesNotContain(token);
		Matcher scope = Pattern.compile("\"scope\":\"(authorization:[0-9a-f]{64})\"").matcher(found);
		assertThat(scope.find()).as("the reported scope in %s", found).isTrue();
		assertThat(TestHttp
			.text(http.send(http.request("GET", "/actuator/idempo?scope=" + scope.group(1) + "&key=" + key, null))))
			.as("the reported scope selects the same record")
			.contains("\"state\":\"completed\"");
		assertThat(TestHttp.text(http.send(http.request("GET",
				"/actuator/idempo?key=" + key + "&authorization="
						+ URLEncoder.encode("Bearer another", StandardCharsets.UTF_8),
				null))))
			.contains("\"state\":\"absent\"");
		assertThat(TestHttp.text(http.send(http.request("DELETE", byAuthorization, null))))
			.contains("\"evicted\":true");
		assertThat(TestHttp.text(http.send(http.request("GET", byAuthorization, null))))
			.contains("\"state\":\"absent\"");
	}

	@Test
	void moreThanOneCallerSelectorIsABadRequest() {
		TestHttp http = new TestHttp(this.port);
		HttpResponse<byte[]> response = http
			.send(http.request("GET", "/actuator/idempo?key=k&principal=bob&scope=principal:bob", null));
		assertThat(response.statusCode()).isEqualTo(400);
	}

}
