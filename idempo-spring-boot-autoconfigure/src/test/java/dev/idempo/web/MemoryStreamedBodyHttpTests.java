package dev.idempo.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.idempo.core.RequestFingerprints;
import dev.idempo.store.ClaimResult;
import dev.idempo.store.StoredRecord;
import dev.idempo.web.StreamedBodyHttpContract.StreamedController;

import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Streamed request bodies on the in-memory store, failing open when the store fails.
 *
 * @author idempo
 */
@TestPropertySource(properties = { "idempo.store.type=memory", "idempo.store-failure.mode=fail-open" })
class MemoryStreamedBodyHttpTests extends StreamedBodyHttpContract {

	/**
	 * A retry meets a completed record whose response cannot be read: its body was read
	 * to compare fingerprints, so even failing open the handler cannot run on it. 503,
	 * and the handler does not run.
	 */
	@Test
	void anUnreadableRecordIs503EvenFailingOpenOnceTheBodyWasReadToCompareIt() {
		String key = TestHttp.newKey();
		byte[] body = body(50_000, 11);
		ClaimResult claim = this.store.claim(storageKey(key), Duration.ofSeconds(10));
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
		String fingerprint = RequestFingerprints.of("POST", "/streamed/upload", null, body);
		assertThat(this.store.complete(((ClaimResult.Acquired) claim).lease(),
				new StoredRecord(fingerprint, "not an envelope".getBytes(StandardCharsets.UTF_8)),
				Duration.ofMinutes(5)))
			.isTrue();
		HttpResponse<byte[]> retry = post("/streamed/upload", key, body, false);
		assertThat(retry.statusCode()).as(TestHttp.text(retry)).isEqualTo(503);
		assertThat(TestHttp.text(retry)).contains("https://idempo.dev/problems/store-unavailable");
		assertThat(StreamedController.executions(key)).isZero();
	}

}
