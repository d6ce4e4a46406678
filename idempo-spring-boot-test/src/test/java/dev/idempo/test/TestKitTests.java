package dev.idempo.test;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import static dev.idempo.test.IdempotencyRequestPostProcessors.idempotencyKey;
import static dev.idempo.test.IdempotencyRequestPostProcessors.newIdempotencyKey;
import static dev.idempo.test.IdempotencyResultMatchers.notReplayed;
import static dev.idempo.test.IdempotencyResultMatchers.problem;
import static dev.idempo.test.IdempotencyResultMatchers.replayed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The test kit in a {@code @WebMvcTest}: keys sent with the post-processors, replays and
 * problems matched, and the in-memory store emptied between tests (the two ordered tests
 * use one key, and the second still runs its handler).
 */
@WebMvcTest(controllers = TestKitTests.OrdersController.class)
@ContextConfiguration(classes = { TestKitTests.KitApplication.class, TestKitTests.OrdersController.class })
@ExtendWith(IdempotencyStoreResetExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TestKitTests {

	static final AtomicInteger executions = new AtomicInteger();

	@Autowired
	MockMvc mvc;

	@Test
	@Order(1)
	void replayIsMatched() throws Exception {
		this.mvc.perform(order("shared-key", "book")).andExpect(status().isCreated()).andExpect(notReplayed());
		this.mvc.perform(order("shared-key", "book")).andExpect(status().isCreated()).andExpect(replayed());
		this.mvc.perform(order("shared-key", "pen"))
			.andExpect(status().isUnprocessableContent())
			.andExpect(problem("key-reused"));
	}

	@Test
	@Order(2)
	void storeIsEmptiedBetweenTests() throws Exception {
		int before = executions.get();
		this.mvc.perform(order("shared-key", "book")).andExpect(status().isCreated()).andExpect(notReplayed());
		assertThat(executions.get() - before).isEqualTo(1);
	}

	@Test
	void newKeysAreFreshAndBadKeysAreProblems() throws Exception {
		this.mvc
			.perform(post("/orders").with(newIdempotencyKey())
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"item\":\"cup\"}"))
			.andExpect(notReplayed());
		this.mvc
			.perform(post("/orders").header("Idempotency-Key", "\"unterminated")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"item\":\"cup\"}"))
			.andExpect(status().isBadRequest())
			.andExpect(problem("invalid-key"));
	}

	private static org.springframework.test.web.servlet.RequestBuilder order(String key, String item) {
		return post("/orders").with(idempotencyKey(key))
			.contentType(MediaType.APPLICATION_JSON)
			.content("{\"item\":\"" + item + "\"}");
	}

	@SpringBootApplication
	static class KitApplication {

	}

	@RestController
	static class OrdersController {

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, String> order) {
			return ResponseEntity.status(201).body(Map.of("order", order, "number", executions.incrementAndGet()));
		}

	}

}
