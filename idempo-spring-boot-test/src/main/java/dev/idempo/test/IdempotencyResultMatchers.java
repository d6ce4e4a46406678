package dev.idempo.test;

import org.springframework.test.web.servlet.ResultMatcher;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * MockMvc result matchers for idempotent responses: whether a response was replayed, and
 * which of idempo's problem types it is.
 *
 * <pre class="code">
 * mvc.perform(post("/payments").with(idempotencyKey("pay-1")).content(json)).andExpect(replayed());
 * mvc.perform(post("/payments").with(idempotencyKey("pay-1")).content(other)).andExpect(problem("key-reused"));
 * </pre>
 *
 * @author idempo
 */
public final class IdempotencyResultMatchers {

	/**
	 * The header idempo adds to replayed responses by default; where
	 * {@code idempo.replayed-header} names another, match it with
	 * {@link #replayed(String)}.
	 */
	public static final String REPLAYED_HEADER = "Idempotent-Replayed";

	/** The prefix of idempo's problem types. */
	public static final String PROBLEM_TYPE_PREFIX = "https://idempo.dev/problems/";

	private IdempotencyResultMatchers() {
	}

	/**
	 * The response is a replay of a stored response ({@code Idempotent-Replayed: true}).
	 * @return the matcher
	 */
	public static ResultMatcher replayed() {
		return (result) -> assertThat(result.getResponse().getHeader(REPLAYED_HEADER)).as("Idempotent-Replayed")
			.isEqualTo("true");
	}

	/**
	 * The handler ran for this response: it is not a replay.
	 * @return the matcher
	 */
	public static ResultMatcher notReplayed() {
		return (result) -> assertThat(result.getResponse().getHeader(REPLAYED_HEADER)).as("Idempotent-Replayed")
			.isNull();
	}

	/**
	 * The response is a replay, marked with the header {@code idempo.replayed-header}
	 * names.
	 * @param header the replayed header
	 * @return the matcher
	 */
	public static ResultMatcher replayed(String header) {
		return (result) -> assertThat(result.getResponse().getHeader(header)).as(header).isEqualTo("true");
	}

	/**
	 * The handler ran for this response, by the header {@code idempo.replayed-header}
	 * names: it is not a replay.
	 * @param header the replayed header
	 * @return the matcher
	 */
	public static ResultMatcher notReplayed(String header) {
		return (result) -> assertThat(result.getResponse().getHeader(header)).as(header).isNull();
	}

	/**
	 * The response is one of idempo's problems, {@code application/problem+json} with the
	 * type {@code https://idempo.dev/problems/<slug>}.
	 * @param slug the problem's slug: {@code invalid-key}, {@code missing-key},
	 * {@code request-in-progress}, {@code request-too-large}, {@code key-reused},
	 * {@code store-unavailable}, {@code commit-failed} or {@code response-not-replayable}
	 * @return the matcher
	 */
	public static ResultMatcher problem(String slug) {
		return (result) -> {
			assertThat(result.getResponse().getContentType()).as("Content-Type").startsWith("application/problem+json");
			assertThat(result.getResponse().getContentAsString()).as("problem type")
				.contains("\"type\":\"" + PROBLEM_TYPE_PREFIX + slug + "\"");
		};
	}

}
