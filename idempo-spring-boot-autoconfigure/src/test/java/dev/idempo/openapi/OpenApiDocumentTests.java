package dev.idempo.openapi;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.idempo.web.TestHttp;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads the OpenAPI document springdoc generates for a real application: idempotent
 * operations document the key header, the replay header, idempo's problem responses and
 * the key policy; other operations are left alone.
 */
@SpringBootTest(classes = OpenApiTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "orders.ttl=45m", "idempo.routes[0].path=/refunds/**", "idempo.routes[0].methods=POST",
				"idempo.routes[0].ttl=2h", "idempo.routes[0].required=true" })
class OpenApiDocumentTests {

	@LocalServerPort
	int port;

	private JsonNode document() {
		HttpResponse<byte[]> response = new TestHttp(this.port)
			.send(new TestHttp(this.port).request("GET", "/v3/api-docs", null));
		assertThat(response.statusCode()).isEqualTo(200);
		return JsonMapper.builder().build().readTree(response.body());
	}

	private static JsonNode keyHeader(JsonNode operation) {
		for (JsonNode parameter : operation.path("parameters")) {
			if ("header".equals(parameter.path("in").asString())
					&& "Idempotency-Key".equals(parameter.path("name").asString())) {
				return parameter;
			}
		}
		return null;
	}

	@Test
	void idempotentOperationDocumentsTheKeyTheReplayAndTheProblems() {
		JsonNode create = document().path("paths").path("/orders").path("post");
		JsonNode key = keyHeader(create);
		assertThat(key).isNotNull();
		assertThat(key.path("required").asBoolean(false)).isFalse();
		assertThat(key.path("schema").path("maxLength").asInt()).isEqualTo(255);
		assertThat(key.path("description").asString()).contains("Structured Fields");
		JsonNode responses = create.path("responses");
		// springdoc documents a ResponseEntity as 200 whatever status it sets
		assertThat(responses.path("200").path("headers").has("Idempotent-Replayed")).isTrue();
		assertThat(responses.path("409").path("headers").has("Retry-After")).isTrue();
		assertThat(responses.path("503").path("headers").has("Retry-After")).isTrue();
		assertThat(responses.path("409").path("content").has("application/problem+json")).isTrue();
		assertThat(responses.path("400").path("description").asString())
			.contains("https://idempo.dev/problems/invalid-key")
			.contains("https://idempo.dev/problems/missing-key");
		assertThat(responses.path("413").path("description").asString())
			.contains("https://idempo.dev/problems/request-too-large");
		assertThat(responses.path("422").path("description").asString())
			.contains("https://idempo.dev/problems/key-reused");
		assertThat(responses.has("410")).as("transactional only").isFalse();
		JsonNode policy = create.path("x-idempotency");
		assertThat(policy.path("ttl").asString()).isEqualTo("PT45M");
		assertThat(policy.path("ttl-seconds").asLong()).isEqualTo(2700);
		assertThat(policy.path("key-required").asBoolean()).isFalse();
		assertThat(policy.path("transactional").asBoolean()).isFalse();
		assertThat(policy.path("cache-response").asBoolean()).isTrue();
	}

	@Test
	void requiredKeyIsDocumentedAsRequired() {
		JsonNode transfer = document().path("paths").path("/transfers").path("post");
		assertThat(keyHeader(transfer).path("required").asBoolean()).isTrue();
		assertThat(transfer.path("x-idempotency").path("key-required").asBoolean()).isTrue();
		assertThat(transfer.path("x-idempotency").path("ttl").asString()).isEqualTo("PT24H");
	}

	@Test
	void lockOnlyOperationIsDocumentedAsNeverReplayed() {
		JsonNode receipt = document().path("paths").path("/receipts").path("post");
		JsonNode key = keyHeader(receipt);
		assertThat(key).isNotNull();
		assertThat(key.path("description").asString()).contains("409")
			.contains("never stored or replayed")
			.doesNotContain("gets the first response back");
		JsonNode responses = receipt.path("responses");
		assertThat(responses.path("200").isMissingNode()).isFalse();
		assertThat(responses.path("200").path("headers").has("Idempotent-Replayed")).as("nothing is replayed")
			.isFalse();
		assertThat(responses.path("409").path("description").asString())
			.contains("https://idempo.dev/problems/request-in-progress");
		assertThat(responses.path("409").path("headers").has("Retry-After")).isTrue();
		assertThat(responses.has("422")).as("no stored response to compare a reused key with").isFalse();
		assertThat(responses.path("503").path("description").asString())
			.contains("https://idempo.dev/problems/store-unavailable");
		JsonNode policy = receipt.path("x-idempotency");
		assertThat(policy.path("cache-response").asBoolean(true)).isFalse();
		assertThat(policy.has("ttl")).as("nothing is kept").isFalse();
		assertThat(policy.has("ttl-seconds")).isFalse();
	}

	@Test
	void aHandlerARouteEntryProtectsIsDocumentedWithTheEntrysPolicy() {
		JsonNode refund = document().path("paths").path("/refunds/{id}").path("post");
		JsonNode key = keyHeader(refund);
		assertThat(key).isNotNull();
		assertThat(key.path("required").asBoolean()).isTrue();
		assertThat(refund.path("responses").path("200").path("headers").has("Idempotent-Replayed")).isTrue();
		assertThat(refund.path("responses").path("422").path("description").asString())
			.contains("https://idempo.dev/problems/key-reused");
		JsonNode policy = refund.path("x-idempotency");
		assertThat(policy.path("ttl").asString()).isEqualTo("PT2H");
		assertThat(policy.path("key-required").asBoolean()).isTrue();
		assertThat(policy.path("cache-response").asBoolean()).isTrue();
	}

	@Test
	void safeMethodsAndOtherHandlersAreLeftAlone() {
		JsonNode paths = document().path("paths");
		for (JsonNode operation : new JsonNode[] { paths.path("/orders/{id}").path("get"),
				paths.path("/notes").path("post") }) {
			assertThat(operation.isMissingNode()).isFalse();
			assertThat(keyHeader(operation)).isNull();
			assertThat(operation.has("x-idempotency")).isFalse();
			assertThat(operation.path("responses").has("409")).isFalse();
		}
	}

}
