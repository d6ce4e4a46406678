package dev.idempo.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.idempo.client.downstream.DownstreamApplication;
import dev.idempo.web.RequestFingerprint;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which idempotent execution a handler's thread carries, for keys derived downstream: a
 * protected request's, identified by its storage key, while the handler runs; nothing for
 * a request without a key, nothing on the thread of an asynchronous handler's
 * {@code Callable}, and nothing left behind on the request thread afterwards (the server
 * has one request thread, so every request reuses the thread of the one before).
 *
 * @author idempo
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CallBindingHttpTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private @Nullable ConfigurableApplicationContext server;

	private int port;

	@BeforeAll
	void startServer() {
		ConfigurableApplicationContext server = new SpringApplicationBuilder(DownstreamApplication.class).run(
				"--server.port=0", "--spring.main.banner-mode=off", "--spring.jmx.enabled=false",
				"--server.tomcat.threads.max=1", "--server.tomcat.threads.min-spare=1");
		this.server = server;
		this.port = Integer.parseInt(server.getEnvironment().getRequiredProperty("local.server.port"));
	}

	@AfterAll
	void stopServer() {
		if (this.server != null) {
			this.server.close();
		}
	}

	@Test
	void aProtectedHandlerRunsBoundToItsStorageKeyAndLeavesNothingBehind() throws Exception {
		String key = UUID.randomUUID().toString();
		assertThat(post("/identity", key)).contains("\"" + RequestFingerprint.storageKey("anonymous", key) + "\"");
		assertThat(post("/identity", null)).as("a request without a key, on the same thread").contains("\"none\"");
		assertThat(post("/identity-async", UUID.randomUUID().toString())).as("the Callable's thread")
			.contains("\"none\"");
		assertThat(post("/identity", null)).as("after an asynchronous handler, on the same thread")
			.contains("\"none\"");
		assertThat(exchange("/identity-failing", UUID.randomUUID().toString()).statusCode())
			.as("a handler that throws while bound")
			.isEqualTo(500);
		assertThat(post("/identity", null)).as("after a handler that threw, on the same thread").contains("\"none\"");
		assertThat(post("/identity", key)).as("a replay, rejected in preHandle")
			.contains("\"" + RequestFingerprint.storageKey("anonymous", key) + "\"");
		assertThat(post("/identity", null)).as("after a replay, on the same thread").contains("\"none\"");
		String other = UUID.randomUUID().toString();
		assertThat(post("/identity", other)).contains("\"" + RequestFingerprint.storageKey("anonymous", other) + "\"");
	}

	private String post(String path, @Nullable String key) throws Exception {
		HttpResponse<String> response = exchange(path, key);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return response.body();
	}

	private HttpResponse<String> exchange(String path, @Nullable String key) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.POST(HttpRequest.BodyPublishers.noBody());
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
