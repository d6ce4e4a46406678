package dev.idempo.web;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Application-wide settings: a required key everywhere, a custom key header, and a custom
 * deny-list of replayed headers.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		"idempo.key-required=true", "idempo.key-header=Request-Key", "idempo.excluded-headers=X-Order-Execution" })
class GlobalSettingsHttpTests {

	@LocalServerPort
	int port;

	@Test
	void keyIsRequiredEverywhere() {
		HttpResponse<byte[]> response = new TestHttp(this.port).post("/t/object", "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(TestHttp.text(response)).contains("https://idempo.dev/problems/missing-key").contains("Request-Key");
	}

	@Test
	void configuredHeaderAndAliasCarryTheKey() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		assertThat(http.send(http.request("POST", "/t/object", "{}", "Request-Key", key)).statusCode()).isEqualTo(200);
		assertThat(http.send(http.request("POST", "/t/object", "{}", "X-Idempotency-Key", key))
			.headers()
			.firstValue("Idempotent-Replayed")).hasValue("true");
		// the default header name is just another header now
		assertThat(http.postWithKey("/t/object", key, "{}").statusCode()).isEqualTo(400);
	}

	@Test
	void excludedHeadersAreNotReplayedAndSetCookieNowIs() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		String body = "{\"item\":\"pen\",\"quantity\":1}";
		HttpResponse<byte[]> first = http.send(http.request("POST", "/t/orders", body, "Request-Key", key));
		HttpResponse<byte[]> replay = http.send(http.request("POST", "/t/orders", body, "Request-Key", key));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(first.headers().firstValue("X-Order-Execution")).isPresent();
		assertThat(replay.headers().firstValue("X-Order-Execution")).isEmpty();
		assertThat(replay.headers().firstValue("Set-Cookie")).isEqualTo(first.headers().firstValue("Set-Cookie"));
		assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
	}

}
