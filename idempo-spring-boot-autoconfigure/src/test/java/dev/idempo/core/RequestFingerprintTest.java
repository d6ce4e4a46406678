package dev.idempo.core;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fingerprints and storage keys.
 *
 * @author idempo
 */
class RequestFingerprintTest {

	private static final byte[] BODY = "{\"amount\":10}".getBytes(StandardCharsets.UTF_8);

	@Test
	void sameRequestSameFingerprint() {
		assertThat(RequestFingerprint.of("POST", "/payments", "a=1", BODY))
			.isEqualTo(RequestFingerprint.of("POST", "/payments", "a=1", BODY.clone()))
			.hasSize(64)
			.matches("[0-9a-f]{64}");
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

}
