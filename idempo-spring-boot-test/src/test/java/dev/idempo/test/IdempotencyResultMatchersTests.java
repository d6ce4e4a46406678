package dev.idempo.test;

import org.junit.jupiter.api.Test;

import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static dev.idempo.test.IdempotencyResultMatchers.notReplayed;
import static dev.idempo.test.IdempotencyResultMatchers.replayed;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * The replay matchers read the header that {@code idempo.replayed-header} names.
 */
class IdempotencyResultMatchersTests {

	private final MockMvc mvc = MockMvcBuilders.standaloneSetup(new ReplayingController()).build();

	@Test
	void aConfiguredReplayedHeaderIsMatched() throws Exception {
		this.mvc.perform(post("/replayed")).andExpect(replayed("X-Replayed")).andExpect(notReplayed());
		this.mvc.perform(post("/fresh")).andExpect(notReplayed("X-Replayed"));
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.mvc.perform(post("/fresh")).andExpect(replayed("X-Replayed")));
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.mvc.perform(post("/replayed")).andExpect(notReplayed("X-Replayed")));
	}

	@RestController
	static class ReplayingController {

		@PostMapping("/replayed")
		ResponseEntity<String> replayed() {
			return ResponseEntity.ok().header("X-Replayed", "true").body("stored");
		}

		@PostMapping("/fresh")
		ResponseEntity<String> fresh() {
			return ResponseEntity.ok("fresh");
		}

	}

}
