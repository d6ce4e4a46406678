package dev.idempo.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's curl walkthrough, as a test.
 *
 * @author idempo
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "sample.bank-delay=1s")
class SampleApplicationTests {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	int port;

	@Test
	void retriedPaymentIsReplayed() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post("/payments", key,
				"{\"amount\":25.00,\"currency\":\"EUR\",\"recipient\":\"alice\"}");
		HttpResponse<String> retry = post("/payments", key,
				"{\"amount\":25.00,\"currency\":\"EUR\",\"recipient\":\"alice\"}");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		HttpResponse<String> other = post("/payments", key,
				"{\"amount\":99.00,\"currency\":\"EUR\",\"recipient\":\"alice\"}");
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(other.headers().firstValue("Content-Type")).hasValue("application/problem+json");
	}

	@Test
	void concurrentTransferIs409AndTransferWithoutKeyIs400() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"amount\":10,\"currency\":\"EUR\",\"recipient\":\"bob\"}";
		CompletableFuture<HttpResponse<String>> first = this.client.sendAsync(request("/transfers", key, body),
				HttpResponse.BodyHandlers.ofString());
		CompletableFuture<HttpResponse<String>> second = this.client.sendAsync(request("/transfers", key, body),
				HttpResponse.BodyHandlers.ofString());
		// the bank call takes a second: one request runs it, the other finds it in
		// progress
		assertThat(List.of(first.get().statusCode(), second.get().statusCode())).containsExactlyInAnyOrder(201, 409);
		HttpResponse<String> conflict = (first.get().statusCode() == 409) ? first.get() : second.get();
		assertThat(conflict.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(post("/transfers", key, body).headers().firstValue("Idempotent-Replayed")).hasValue("true");
		HttpResponse<String> missing = this.client.send(HttpRequest.newBuilder(uri("/transfers"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(missing.statusCode()).isEqualTo(400);
	}

	@Test
	void openApiDocumentDescribesTheKeyOfIdempotentOperations() throws Exception {
		HttpResponse<String> document = this.client.send(HttpRequest.newBuilder(uri("/v3/api-docs")).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(document.statusCode()).isEqualTo(200);
		assertThat(document.body()).contains("\"Idempotency-Key\"")
			.contains("\"x-idempotency\"")
			.contains("https://idempo.dev/problems/request-in-progress");
	}

	@Test
	void storeHealthHasItsOwnGroupAndStaysOutOfLiveness() throws Exception {
		HttpResponse<String> store = this.client.send(
				HttpRequest.newBuilder(uri("/actuator/health/idempo-store")).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(store.statusCode()).isEqualTo(200);
		assertThat(store.body()).contains("\"idempo\"").contains("\"store\":\"memory\"").contains("UP");
		HttpResponse<String> liveness = this.client.send(
				HttpRequest.newBuilder(uri("/actuator/health/liveness")).build(), HttpResponse.BodyHandlers.ofString());
		assertThat(liveness.statusCode()).isEqualTo(200);
		assertThat(liveness.body()).doesNotContain("idempo");
	}

	@Test
	void idempoEndpointShowsAndEvictsAKey() throws Exception {
		String key = UUID.randomUUID().toString();
		post("/payments", key, "{\"amount\":3,\"recipient\":\"dave\"}");
		HttpResponse<String> state = this.client.send(
				HttpRequest.newBuilder(uri("/actuator/idempo?key=" + key)).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(state.body()).contains("\"state\":\"completed\"").contains("\"status\":201");
		HttpResponse<String> evicted = this.client.send(
				HttpRequest.newBuilder(uri("/actuator/idempo?key=" + key)).DELETE().build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(evicted.body()).contains("\"evicted\":true");
	}

	@Test
	void metricsAreInActuator() throws Exception {
		post("/payments", UUID.randomUUID().toString(), "{\"amount\":1,\"recipient\":\"carol\"}");
		HttpResponse<String> metrics = this.client.send(
				HttpRequest.newBuilder(uri("/actuator/metrics/idempo.requests")).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(metrics.statusCode()).isEqualTo(200);
		assertThat(metrics.body()).contains("executed");
	}

	private HttpResponse<String> post(String path, String key, String body) throws Exception {
		return this.client.send(request(path, key, body), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest request(String path, String key, String body) {
		return HttpRequest.newBuilder(uri(path))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

}
