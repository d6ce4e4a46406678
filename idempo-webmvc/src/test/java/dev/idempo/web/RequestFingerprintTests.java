package dev.idempo.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.idempo.core.FingerprintOptions;

import org.springframework.http.MediaType;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockMultipartHttpServletRequest;
import org.springframework.mock.web.MockPart;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fingerprints and storage keys.
 *
 * @author idempo
 */
class RequestFingerprintTests {

	private static final byte[] BODY = "{\"amount\":10}".getBytes(StandardCharsets.UTF_8);

	@Test
	void sameRequestSameFingerprint() {
		assertThat(RequestFingerprint.of("POST", "/payments", "a=1", BODY))
			.isEqualTo(RequestFingerprint.of("POST", "/payments", "a=1", BODY.clone()))
			.hasSize(64)
			.matches("[0-9a-f]{64}");
	}

	/**
	 * The digest of records stored by every earlier version, computed apart (SHA-256 over
	 * the length-prefixed fields {@code fingerprint/1}, method, path, {@code ?} and
	 * query, body): with no {@code idempo.fingerprint} options, a request's fingerprint
	 * must stay this, or every retry of a stored request would get 422.
	 */
	@Test
	void theFingerprintOfStoredRecordsDoesNotChange() throws IOException {
		String stored = "7fa960d380818fcfd88e5d671801f39dc84073e41f29190d68ef053265573444";
		assertThat(RequestFingerprint.of("POST", "/payments", "a=1", BODY)).isEqualTo(stored);
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/payments");
		request.setQueryString("a=1");
		request.setContentType(MediaType.APPLICATION_JSON_VALUE);
		FingerprintOptions none = FingerprintOptions.NONE;
		assertThat(none.withHeaders(
				RequestFingerprintStrategy.DEFAULT.fingerprint(request, none.body(request.getContentType(), BODY)),
				(name) -> List.of("a value")))
			.isEqualTo(stored);
	}

	@Test
	void everyPartChangesTheFingerprint() {
		String base = RequestFingerprint.of("POST", "/payments", "a=1", BODY);
		assertThat(RequestFingerprint.of("PUT", "/payments", "a=1", BODY)).isNotEqualTo(base);
		assertThat(RequestFingerprint.of("POST", "/payment", "a=1", BODY)).isNotEqualTo(base);
		assertThat(RequestFingerprint.of("POST", "/payments", "a=2", BODY)).isNotEqualTo(base);
		assertThat(RequestFingerprint.of("POST", "/payments", null, BODY)).isNotEqualTo(base);
		assertThat(
				RequestFingerprint.of("POST", "/payments", "a=1", "{\"amount\":11}".getBytes(StandardCharsets.UTF_8)))
			.isNotEqualTo(base);
	}

	@Test
	void emptyQueryDiffersFromNoQuery() {
		assertThat(RequestFingerprint.of("POST", "/p", "", BODY))
			.isNotEqualTo(RequestFingerprint.of("POST", "/p", null, BODY));
	}

	@Test
	void fieldBoundariesCannotBeShifted() {
		assertThat(RequestFingerprint.of("POST", "/ab", "c", new byte[0]))
			.isNotEqualTo(RequestFingerprint.of("POST", "/a", "bc", new byte[0]));
		assertThat(RequestFingerprint.storageKey("ab", "c")).isNotEqualTo(RequestFingerprint.storageKey("a", "bc"));
	}

	@Test
	void storageKeyDependsOnScopeAndKeyOnly() {
		assertThat(RequestFingerprint.storageKey("principal:alice", "k1"))
			.isEqualTo(RequestFingerprint.storageKey("principal:alice", "k1"))
			.isNotEqualTo(RequestFingerprint.storageKey("principal:bob", "k1"))
			.isNotEqualTo(RequestFingerprint.storageKey("principal:alice", "k2"))
			.doesNotContain("alice")
			.matches("[0-9a-f]{64}");
	}

	/**
	 * Stored records carry these digests: if one changes, every retry of a request stored
	 * before the change gets a 422. The values were computed by the release that stored
	 * them.
	 */
	@Test
	void digestsOfStoredRecordsNeverChange() {
		assertThat(RequestFingerprint.of("POST", "/payments", "a=1", BODY))
			.isEqualTo("7fa960d380818fcfd88e5d671801f39dc84073e41f29190d68ef053265573444");
		assertThat(RequestFingerprint.of("DELETE", "/payments/1", "", new byte[0]))
			.isEqualTo("9de5b4d701eb9b8dbca804f74c09146b68701e065c758dfadd0305583c9b15d4");
		assertThat(RequestFingerprint.storageKey("principal:alice", "8e03978e-40d5"))
			.isEqualTo("6cf8da67184fefbb9ec60946f88ab1d3e4ea82ff60420d590669d2fea36e0123");
	}

	@Test
	void canonicalFormOfAFormPostNeverChanges() throws Exception {
		MockHttpServletRequest form = new MockHttpServletRequest("POST", "/payments");
		form.setContentType("application/x-www-form-urlencoded");
		form.addParameter("currency", "EUR");
		form.addParameter("amount", "10");
		form.addParameter("tag", "a", "b\u00e9");
		byte[] canonical = RequestFingerprint.canonicalForm(form);
		assertThat(HexFormat.of().formatHex(canonical)).isEqualTo("000000017000000006616d6f756e7400000001000000023130"
				+ "00000001700000000863757272656e637900000001000000034555520000000170000000037461670000000200000001"
				+ "610000000362c3a9");
		assertThat(RequestFingerprint.of("POST", "/payments", "x=1", canonical))
			.isEqualTo("7d233ad954d8e336468ec77cbd656c610f7c3c68d361511aacd0b740a8ae5e34");
	}

	@Test
	void canonicalFormOfAMultipartPostNeverChanges() throws Exception {
		MockMultipartHttpServletRequest multipart = new MockMultipartHttpServletRequest();
		multipart.setMethod("POST");
		multipart.setRequestURI("/uploads");
		multipart.setContentType("multipart/form-data; boundary=xyz");
		multipart.addParameter("title", "Report");
		MockPart file = new MockPart("file", "report.pdf", "%PDF-1.7 content".getBytes(StandardCharsets.UTF_8));
		file.getHeaders().setContentType(MediaType.APPLICATION_PDF);
		multipart.addPart(file);
		multipart.addPart(new MockPart("note", "hello".getBytes(StandardCharsets.UTF_8)));
		byte[] canonical = RequestFingerprint.canonicalForm(multipart);
		assertThat(RequestFingerprint.of("POST", "/uploads", null, canonical))
			.isEqualTo("637f83d4e22432da47f9924acef1488643c44bfee5bf84e28d68f575a50016b0");
	}

	@Test
	void formsAreRecognisedByContentType() {
		assertThat(RequestFingerprint.isForm("application/x-www-form-urlencoded;charset=UTF-8")).isTrue();
		assertThat(RequestFingerprint.isForm("Multipart/Form-Data; boundary=x")).isTrue();
		assertThat(RequestFingerprint.isForm("application/json")).isFalse();
		assertThat(RequestFingerprint.isForm(null)).isFalse();
	}

}
