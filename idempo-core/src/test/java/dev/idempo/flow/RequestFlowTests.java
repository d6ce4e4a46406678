package dev.idempo.flow;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.idempo.core.IdempotencySettings;
import dev.idempo.store.StoredRecord;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * What a claim's decision needs: only a completed record's compares fingerprints, so an
 * entry point whose fingerprint is pending (a streamed body) reads it for that decision
 * only.
 *
 * @author idempo
 */
class RequestFlowTests {

	private final RequestFlow flow = new RequestFlow(IdempotencySettings.defaults());

	@Test
	void onlyACompletedRecordsDecisionComparesFingerprints() {
		StoredRecord record = new StoredRecord("fingerprint", new byte[0]);
		assertThat(this.flow.comparesFingerprint(new ClaimMode.Replay<Object>(record))).isTrue();
		assertThat(this.flow.comparesFingerprint(new ClaimMode.InProgress<Object>())).isFalse();
		assertThat(this.flow.comparesFingerprint(new ClaimMode.Held<Object>(new Object()))).isFalse();
	}

	@Test
	void decisionsThatDoNotCompareFingerprintsNeverAskForOne() {
		for (ClaimMode.Claim<Object> claim : List.of(new ClaimMode.InProgress<Object>(),
				new ClaimMode.Held<Object>(new Object()))) {
			assertThat(this.flow.decide(claim, (stored) -> {
				throw new IllegalStateException("asked for the fingerprint");
			}, List.of())).isNotNull();
		}
		assertThatIllegalStateException().isThrownBy(() -> this.flow
			.decide(new ClaimMode.Replay<Object>(new StoredRecord("fingerprint", new byte[0])), (stored) -> {
				throw new IllegalStateException("asked for the fingerprint");
			}, List.of()));
	}

}
