package dev.idempo.web;

import java.net.http.HttpResponse;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempo.responses}, {@code idempo.fingerprint} and {@code idempo.replayed-header}
 * configured away from their defaults, on a real store (a subclass per store): a 500 made
 * storable is replayed byte for byte, a status taken out releases its key, a retry that
 * differs only in an ignored JSON field replays while one that differs elsewhere gets
 * 422, and the configured headers join the fingerprint.
 *
 * @author idempo
 */
@SpringBootTest(classes = HttpTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempo.responses.stored=2xx, 3xx, 4xx, 5xx",
				"idempo.responses.not-stored=408, 425, 429, 409, 503",
				"idempo.fingerprint.ignored-fields=/timestamp, /meta/requestId", "idempo.fingerprint.headers=X-Tenant",
				"idempo.replayed-header=X-Replayed" })
public abstract class ResponsePolicyHttpTests {

	private static final String REPLAYED = "X-Replayed";

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@Autowired
	MeterRegistry meters;

	TestHttp http;

	@BeforeEach
	void setUpClient() {
		this.http = new TestHttp(this.port);
	}

	@Test
	void aServerErrorMadeStorableIsReplayedByteForByte() {
		String key = TestHttp.newKey();
		int before = this.executions.count("status-500");
		double stored = responses("stored", "none");
		HttpResponse<byte[]> first = this.http.postWithKey("/t/status/500", key, "{}");
		HttpResponse<byte[]> retry = this.http.postWithKey("/t/status/500", key, "{}");
		assertThat(first.statusCode()).isEqualTo(500);
		assertThat(first.headers().firstValue(REPLAYED)).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(500);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(retry.headers().firstValue(REPLAYED)).hasValue("true");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("the default name is not used").isEmpty();
		assertThat(this.executions.count("status-500")).isEqualTo(before + 1);
		assertThat(responses("stored", "none")).isEqualTo(stored + 1);
	}

	/**
	 * 409 is stored by default and taken out here; 503 is in {@code stored} (5xx) and in
	 * {@code not-stored}, which wins.
	 */
	@ParameterizedTest
	@ValueSource(ints = { 409, 503 })
	void aStatusTheConfigurationDoesNotStoreReleasesTheKey(int status) {
		String key = TestHttp.newKey();
		String path = "/t/status/" + status;
		int before = this.executions.count("status-" + status);
		double notStored = responses("not_stored", "status");
		assertThat(this.http.postWithKey(path, key, "{}").statusCode()).isEqualTo(status);
		HttpResponse<byte[]> retry = this.http.postWithKey(path, key, "{}");
		assertThat(retry.statusCode()).isEqualTo(status);
		assertThat(retry.headers().firstValue(REPLAYED)).isEmpty();
		assertThat(this.executions.count("status-" + status)).isEqualTo(before + 2);
		assertThat(responses("not_stored", "status")).isEqualTo(notStored + 2);
	}

	@Test
	void aRetryThatDiffersOnlyInIgnoredFieldsReplays() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = post(key,
				"{\"item\":\"pen\",\"quantity\":1,\"timestamp\":\"10:00:00\",\"meta\":{\"requestId\":\"a\",\"channel\":\"web\"}}",
				"X-Tenant", "t1");
		HttpResponse<byte[]> retry = post(key,
				"{ \"meta\": {\"channel\": \"web\", \"requestId\": \"b\"}, \"quantity\": 1.0, \"item\": \"pen\", \"timestamp\": \"10:00:05\" }",
				"X-Tenant", "t1");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue(REPLAYED)).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		String withoutIgnoredFields = "{\"item\":\"pen\",\"quantity\":1,\"meta\":{\"channel\":\"web\"}}";
		assertThat(post(key, withoutIgnoredFields, "X-Tenant", "t1").headers().firstValue(REPLAYED))
			.as("the ignored fields left out")
			.hasValue("true");
	}

	@Test
	void aRetryThatDiffersElsewhereIsRejected() {
		String key = TestHttp.newKey();
		assertThat(post(key, "{\"item\":\"pen\",\"quantity\":1,\"timestamp\":\"1\"}", "X-Tenant", "t1").statusCode())
			.isEqualTo(201);
		assertKeyReused(post(key, "{\"item\":\"pen\",\"quantity\":2,\"timestamp\":\"1\"}", "X-Tenant", "t1"));
		assertKeyReused(
				post(key, "{\"item\":\"pen\",\"quantity\":1,\"meta\":{\"channel\":\"app\"}}", "X-Tenant", "t1"));
	}

	@Test
	void theConfiguredHeadersArePartOfTheFingerprint() {
		String key = TestHttp.newKey();
		String body = "{\"item\":\"pen\",\"quantity\":1}";
		assertThat(post(key, body, "x-tenant", "t1").statusCode()).isEqualTo(201);
		assertThat(post(key, body, "X-TENANT", "t1").headers().firstValue(REPLAYED)).as("names are case-insensitive")
			.hasValue("true");
		HttpResponse<byte[]> otherTenant = post(key, body, "X-Tenant", "t2");
		assertKeyReused(otherTenant);
		assertThat(TestHttp.text(otherTenant)).contains("or the value of x-tenant");
		assertKeyReused(this.http.postWithKey("/t/orders", key, body));
		assertKeyReused(post(key, body, "X-Tenant", ""));
		String absent = TestHttp.newKey();
		assertThat(this.http.postWithKey("/t/orders", absent, body).statusCode()).isEqualTo(201);
		assertKeyReused(post(absent, body, "X-Tenant", ""));
	}

	@Test
	void bodiesThatAreNotJsonAreFingerprintedAsSent() {
		String text = TestHttp.newKey();
		assertThat(this.http
			.send(this.http.request("POST", "/t/status/201", "{\"timestamp\":1}", "Idempotency-Key", text)
				.setHeader("Content-Type", "text/plain"))
			.statusCode()).isEqualTo(201);
		assertKeyReused(
				this.http.send(this.http.request("POST", "/t/status/201", "{\"timestamp\":2}", "Idempotency-Key", text)
					.setHeader("Content-Type", "text/plain")));
		String unparsable = TestHttp.newKey();
		assertThat(this.http.postWithKey("/t/status/201", unparsable, "{\"timestamp\":1").statusCode()).isEqualTo(201);
		assertKeyReused(this.http.postWithKey("/t/status/201", unparsable, "{\"timestamp\":2"));
	}

	/**
	 * A JSON number BigDecimal cannot hold makes no canonical form; the request is
	 * fingerprinted as sent and reaches the handler (which ignores its body), not a 500.
	 */
	@Test
	void aJsonBodyWithANumberBeyondBigDecimalIsFingerprintedAsSent() {
		String key = TestHttp.newKey();
		HttpResponse<byte[]> first = this.http.postWithKey("/t/status/201", key, "{\"amount\":1e-2147483648}");
		assertThat(first.statusCode()).as(TestHttp.text(first)).isEqualTo(201);
		HttpResponse<byte[]> retry = this.http.postWithKey("/t/status/201", key, "{\"amount\":1e-2147483648}");
		assertThat(retry.headers().firstValue(REPLAYED)).hasValue("true");
	}

	private HttpResponse<byte[]> post(String key, String body, String header, String value) {
		return this.http.post("/t/orders", body, "Idempotency-Key", key, header, value);
	}

	private static void assertKeyReused(HttpResponse<byte[]> response) {
		assertThat(response.statusCode()).as(TestHttp.text(response)).isEqualTo(422);
		assertThat(TestHttp.text(response)).contains("https://idempo.dev/problems/key-reused");
	}

	private double responses(String outcome, String reason) {
		Counter counter = this.meters.find("idempo.responses")
			.tags("source", "web", "outcome", outcome, "reason", reason)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

}
