package dev.idempo.test;

import java.io.IOException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import static dev.idempo.test.IdempotencyRequestPostProcessors.idempotencyKey;
import static dev.idempo.test.IdempotencyResultMatchers.notReplayed;
import static dev.idempo.test.IdempotencyResultMatchers.replayed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Every kind of response Spring MVC produces before or instead of an {@code @Idempotent}
 * handler, under MockMvc, which dispatches no error page and sends no request events: the
 * execution ends when the dispatch returns, so a retry with the same key never meets a
 * stale {@code 409}. A request rejected before the handler method began (415, 400 from an
 * unreadable body, a conversion, a missing parameter or {@code @Valid}) is not stored:
 * the same request again is answered afresh, and the corrected one with the same key runs
 * the handler. A handler that ran and answered 4xx (a {@code ResponseStatusException},
 * {@code sendError}, a 406 for a result it cannot write) is stored and replayed; a 5xx is
 * not stored and runs again. A subclass per setting of
 * {@code spring.mvc.problemdetails.enabled}.
 */
@SpringBootTest(classes = AbstractErrorResponsesMockMvcTests.ErrorsApplication.class)
@AutoConfigureMockMvc
abstract class AbstractErrorResponsesMockMvcTests {

	static final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

	@Autowired
	MockMvc mvc;

	@Test
	void unsupportedMediaTypeIsNotStoredAndTheCorrectedRetryRuns() throws Exception {
		rejectedThenCorrected(() -> post("/kit/orders").content("{\"item\":\"book\"}"), 415,
				() -> post("/kit/orders").contentType(MediaType.APPLICATION_JSON).content("{\"item\":\"book\"}"), 201,
				"orders");
	}

	@Test
	void unreadableBodyIsNotStoredAndTheCorrectedRetryRuns() throws Exception {
		rejectedThenCorrected(() -> post("/kit/orders").contentType(MediaType.APPLICATION_JSON).content("{\"item\":"),
				400, () -> post("/kit/orders").contentType(MediaType.APPLICATION_JSON).content("{\"item\":\"book\"}"),
				201, "orders");
	}

	@Test
	void failedConversionIsNotStoredAndTheCorrectedRetryRuns() throws Exception {
		rejectedThenCorrected(() -> post("/kit/count").param("n", "many"), 400,
				() -> post("/kit/count").param("n", "3"), 200, "count");
	}

	@Test
	void missingParameterIsNotStoredAndTheCorrectedRetryRuns() throws Exception {
		rejectedThenCorrected(() -> post("/kit/count"), 400, () -> post("/kit/count").param("n", "3"), 200, "count");
	}

	@Test
	void failedValidationIsNotStoredAndTheCorrectedRetryRuns() throws Exception {
		rejectedThenCorrected(
				() -> post("/kit/validated").contentType(MediaType.APPLICATION_JSON)
					.content("{\"item\":\"\",\"quantity\":0}"),
				400, () -> post("/kit/validated").contentType(MediaType.APPLICATION_JSON)
					.content("{\"item\":\"book\",\"quantity\":1}"),
				201, "validated");
	}

	@Test
	void responseStatusExceptionOfAHandlerThatRanIsStoredAndReplayed() throws Exception {
		ranThenReplayed(() -> post("/kit/lookup"), 404, "lookup");
	}

	@Test
	void sendErrorOfAHandlerThatRanIsStoredAndReplayed() throws Exception {
		ranThenReplayed(() -> post("/kit/send-error"), 409, "send-error");
	}

	@Test
	void resultTheHandlerCannotWriteInAnAcceptedTypeIsStoredAndReplayed() throws Exception {
		ranThenReplayed(() -> post("/kit/report").accept(MediaType.IMAGE_PNG), 406, "report");
	}

	@Test
	void serverErrorSentByAHandlerIsNotStoredAndRunsAgain() throws Exception {
		String key = newKey();
		int before = count("send-error-503");
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(post("/kit/send-error-503").with(idempotencyKey(key)))
				.andExpect(status().isServiceUnavailable())
				.andExpect(notReplayed());
		}
		assertThat(count("send-error-503")).isEqualTo(before + 2);
	}

	/**
	 * {@code rejected} is answered {@code status} without running the handler, twice with
	 * the same key (never a stale 409, never a replay); then {@code corrected}, with that
	 * key, runs the handler once and is replayed.
	 */
	private void rejectedThenCorrected(Supplier<MockHttpServletRequestBuilder> rejected, int status,
			Supplier<MockHttpServletRequestBuilder> corrected, int correctedStatus, String endpoint) throws Exception {
		String key = newKey();
		int before = count(endpoint);
		for (int i = 0; i < 2; i++) {
			MvcResult result = this.mvc.perform(rejected.get().with(idempotencyKey(key)))
				.andExpect(notReplayed())
				.andReturn();
			assertThat(result.getResponse().getStatus()).as("attempt %d", i + 1).isEqualTo(status);
		}
		assertThat(count(endpoint)).isEqualTo(before);
		this.mvc.perform(corrected.get().with(idempotencyKey(key)))
			.andExpect(status().is(correctedStatus))
			.andExpect(notReplayed());
		assertThat(count(endpoint)).isEqualTo(before + 1);
		this.mvc.perform(corrected.get().with(idempotencyKey(key)))
			.andExpect(status().is(correctedStatus))
			.andExpect(replayed());
		assertThat(count(endpoint)).isEqualTo(before + 1);
	}

	/** The handler runs once and answers {@code status}; the retry replays it. */
	private void ranThenReplayed(Supplier<MockHttpServletRequestBuilder> request, int status, String endpoint)
			throws Exception {
		String key = newKey();
		int before = count(endpoint);
		this.mvc.perform(request.get().with(idempotencyKey(key)))
			.andExpect(status().is(status))
			.andExpect(notReplayed());
		this.mvc.perform(request.get().with(idempotencyKey(key))).andExpect(status().is(status)).andExpect(replayed());
		assertThat(count(endpoint)).isEqualTo(before + 1);
	}

	private static String newKey() {
		return UUID.randomUUID().toString();
	}

	private static int count(String endpoint) {
		return executions.computeIfAbsent(endpoint, (name) -> new AtomicInteger()).get();
	}

	private static void ran(String endpoint) {
		executions.computeIfAbsent(endpoint, (name) -> new AtomicInteger()).incrementAndGet();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(KitController.class)
	static class ErrorsApplication {

	}

	record Order(@NotBlank String item, @Positive int quantity) {
	}

	@RestController
	@RequestMapping("/kit")
	static class KitController {

		@PostMapping("/orders")
		@Idempotent
		@ResponseStatus(HttpStatus.CREATED)
		Map<String, Object> orders(@RequestBody Map<String, String> order) {
			ran("orders");
			return Map.of("order", order);
		}

		@PostMapping("/validated")
		@Idempotent
		@ResponseStatus(HttpStatus.CREATED)
		Order validated(@Valid @RequestBody Order order) {
			ran("validated");
			return order;
		}

		@PostMapping("/count")
		@Idempotent
		Map<String, Object> count(@RequestParam int n) {
			ran("count");
			return Map.of("n", n);
		}

		@PostMapping("/lookup")
		@Idempotent
		Map<String, Object> lookup() {
			ran("lookup");
			throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no such thing");
		}

		@PostMapping("/send-error")
		@Idempotent
		void sendError(HttpServletResponse response) throws IOException {
			ran("send-error");
			response.sendError(409, "taken");
		}

		@PostMapping("/send-error-503")
		@Idempotent
		void sendError503(HttpServletResponse response) throws IOException {
			ran("send-error-503");
			response.sendError(503, "later");
		}

		@PostMapping("/report")
		@Idempotent
		Map<String, Object> report() {
			ran("report");
			return Map.of("report", "ready");
		}

	}

}
