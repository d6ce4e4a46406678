package dev.idempo.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ResponseEnvelope;

import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holding back a response and letting it go.
 *
 * @author idempo
 */
class CapturingResponseTest {

	private static final IdempotencySettings settings = IdempotencySettings.defaults();

	@Test
	void envelopeIsTheEncodedCapturedResponse() throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		servletResponse.setHeader("X-Request-Id", "set by a filter");
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.startCapture(1024);
		response.setStatus(201);
		response.setContentType("application/json");
		response.setHeader("Location", "/orders/1");
		response.addHeader("Set-Cookie", "session=1");
		response.getWriter().write("{\"id\":1,");
		response.getWriter().write("\"name\":\"pen\"}");
		assertThat(response.envelope(settings::isReplayable))
			.isEqualTo(ResponseEnvelope.encode(response.captured(settings::isReplayable)));
		assertThat(response.captured(settings::isReplayable).headers()).containsOnlyKeys("Content-Type", "Location");
		assertThat(servletResponse.getContentAsByteArray()).isEmpty();
		response.flushToClient();
		assertThat(servletResponse.getContentAsString()).isEqualTo("{\"id\":1,\"name\":\"pen\"}");
		assertThat(servletResponse.getContentLength()).isEqualTo(21);
	}

	@Test
	void streamingLetsHeldBytesGoAndIsRemembered() throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.startCapture(1024);
		response.getOutputStream().write("first ".getBytes(StandardCharsets.UTF_8));
		assertThat(response.isStreamed()).isFalse();
		response.stopCapture();
		response.getOutputStream().write("second".getBytes(StandardCharsets.UTF_8));
		assertThat(response.isStreamed()).isTrue();
		assertThat(response.isCapturing()).isFalse();
		assertThat(servletResponse.getContentAsString()).isEqualTo("first second");
	}

	@Test
	void heldBytesAreReservedAndAResponseBeyondTheBudgetGoesOutUnstored() throws IOException {
		BufferBudget budget = new BufferBudget(100);
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse, budget);
		response.startCapture(1024);
		String first = "123456";
		String second = "a".repeat(40);
		String third = "b".repeat(40);
		response.getOutputStream().write(first.getBytes(StandardCharsets.UTF_8));
		assertThat(budget.used()).as("the buffer's first capacity").isEqualTo(32);
		response.getOutputStream().write(second.getBytes(StandardCharsets.UTF_8));
		assertThat(budget.used()).as("the capacity it doubled to").isEqualTo(64);
		assertThat(servletResponse.getContentAsByteArray()).isEmpty();
		response.getOutputStream().write(third.getBytes(StandardCharsets.UTF_8));
		assertThat(response.isOverBudget()).as("doubling again would take 128 bytes").isTrue();
		assertThat(response.isOverflowed()).isTrue();
		assertThat(response.isCapturing()).isFalse();
		assertThat(servletResponse.getContentAsString()).isEqualTo(first + second + third);
		assertThat(budget.refused()).isEqualTo(1);
		response.releaseBudget();
		response.releaseBudget();
		assertThat(budget.used()).isZero();
	}

	@Test
	void aResponseHeldForATransactionCountsButIsNeverRefused() throws IOException {
		BufferBudget budget = new BufferBudget(4);
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse, budget);
		response.startHolding();
		response.getOutputStream().write("held whole".getBytes(StandardCharsets.UTF_8));
		assertThat(response.isOverBudget()).isFalse();
		assertThat(budget.used()).as("the buffer's capacity, over the budget").isEqualTo(32);
		assertThat(servletResponse.getContentAsByteArray()).isEmpty();
		CapturingResponse other = new CapturingResponse(new MockHttpServletResponse(), budget);
		other.startCapture(1024);
		other.getOutputStream().write('x');
		assertThat(other.isOverBudget()).as("no room left for others").isTrue();
		response.flushToClient();
		response.releaseBudget();
		assertThat(servletResponse.getContentAsString()).isEqualTo("held whole");
		assertThat(budget.used()).isZero();
	}

}
