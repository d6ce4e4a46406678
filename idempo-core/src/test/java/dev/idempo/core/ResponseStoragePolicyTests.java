package dev.idempo.core;

import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link ResponseStoragePolicy}.
 *
 * @author idempo
 */
class ResponseStoragePolicyTests {

	/** The rule the web flow had before the policy: the default must keep it. */
	private static boolean storedBeforeThePolicy(int status) {
		return status >= 200 && status < 500 && status != 408 && status != 425 && status != 429;
	}

	@Test
	void defaultStoresWhatWasStoredBefore() {
		IntStream.rangeClosed(100, 599)
			.forEach((status) -> assertThat(ResponseStoragePolicy.DEFAULT.isStored(status)).as("status %d", status)
				.isEqualTo(storedBeforeThePolicy(status)));
	}

	@Test
	void codesAndClassesCombineAndNotStoredWins() {
		ResponseStoragePolicy policy = ResponseStoragePolicy.of(List.of(" 2XX", "500", "4xx"), List.of("409", "4xx"));
		assertThat(policy.isStored(201)).isTrue();
		assertThat(policy.isStored(500)).isTrue();
		assertThat(policy.isStored(503)).isFalse();
		assertThat(policy.isStored(400)).isFalse();
		assertThat(policy.isStored(302)).isFalse();
		assertThat(policy.stored()).containsExactly("2xx", "500", "4xx");
		assertThat(policy).hasToString("2xx, 500, 4xx except 409, 4xx");
	}

	@Test
	void statusesOutsideTheRangeAreNeverStored() {
		ResponseStoragePolicy policy = ResponseStoragePolicy.of(List.of("1xx", "2xx", "3xx", "4xx", "5xx"), List.of());
		assertThat(policy.isStored(99)).isFalse();
		assertThat(policy.isStored(600)).isFalse();
		assertThat(policy.isStored(-1)).isFalse();
		assertThat(policy.isStored(599)).isTrue();
	}

	@ParameterizedTest
	@ValueSource(strings = { "6xx", "abc", "99", "0xx", "600", "1000", "", "2x", "20x" })
	void invalidEntriesAreRefused(String entry) {
		assertThat(ResponseStoragePolicy.problem(entry)).contains("'" + entry + "'");
		assertThatIllegalArgumentException().isThrownBy(() -> ResponseStoragePolicy.of(List.of(entry), List.of()));
		assertThatIllegalArgumentException().isThrownBy(() -> ResponseStoragePolicy.of(List.of(), List.of(entry)));
	}

	@Test
	void documentedStatusesFollowThePolicy() {
		ResponseStoragePolicy policy = ResponseStoragePolicy.DEFAULT;
		assertThat(policy.isStored("201")).isTrue();
		assertThat(policy.isStored("2XX")).isTrue();
		assertThat(policy.isStored("4XX")).as("408, 425 and 429 are not").isFalse();
		assertThat(policy.isStored("429")).isFalse();
		assertThat(policy.isStored("500")).isFalse();
		assertThat(policy.isStored("default")).isTrue();
		assertThat(ResponseStoragePolicy.of(List.of(), List.of()).isStored("default")).isFalse();
		assertThat(ResponseStoragePolicy.of(List.of("5xx"), List.of()).isStored("5XX")).isTrue();
	}

}
