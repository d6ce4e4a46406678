package dev.idempo.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.ServletOutputStream;

import org.junit.jupiter.api.Test;

import dev.idempo.core.IdempotencyListener.NotStoredReason;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.core.ResponseStoragePolicy;

import org.springframework.mock.web.DelegatingServletOutputStream;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holding back a response and letting it go.
 *
 * @author idempo
 */
class CapturingResponseTests {

	private static final ResponseStoragePolicy DEFAULT_POLICY = ResponseStoragePolicy.DEFAULT;

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

	/**
	 * A body too large to store streams through, but the byte that completes its declared
	 * length waits until the key is released: before that the client has no whole
	 * response to retry after.
	 */
	@Test
	void overflowingBodyWithADeclaredLengthHoldsBackItsLastByteUntilLetGo() throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.startCapture(4);
		response.setContentLength(10);
		response.getOutputStream().write("0123".getBytes(StandardCharsets.UTF_8));
		response.getOutputStream().write("456789".getBytes(StandardCharsets.UTF_8));
		response.getOutputStream().flush();
		response.flushBuffer();
		assertThat(response.isOverflowed()).isTrue();
		assertThat(servletResponse.getContentAsString()).isEqualTo("012345678");
		response.flushToClient();
		assertThat(servletResponse.getContentAsString()).isEqualTo("0123456789");
	}

	/**
	 * Closing the stream would end a response (a chunked one, or one whose length is
	 * computed at the close): while the end is held, the container closes it after the
	 * key was released.
	 */
	@Test
	void closingTheStreamOfAResponseThatIsNotCapturedWaitsForTheEnd() throws IOException {
		AtomicBoolean closed = new AtomicBoolean();
		MockHttpServletResponse servletResponse = new MockHttpServletResponse() {

			@Override
			public ServletOutputStream getOutputStream() {
				return new DelegatingServletOutputStream(super.getOutputStream()) {

					@Override
					public void close() throws IOException {
						closed.set(true);
						super.close();
					}

				};
			}

		};
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.holdEnd();
		response.getOutputStream().write("streamed".getBytes(StandardCharsets.UTF_8));
		response.getOutputStream().close();
		assertThat(servletResponse.getContentAsString()).isEqualTo("streamed");
		assertThat(closed).isFalse();
		response.flushToClient();
		response.getOutputStream().close();
		assertThat(closed).isTrue();
	}

	@Test
	void streamThatDeclaresItsLengthHoldsBackOnlyTheByteThatCompletesIt() throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.startCapture(1024);
		response.stopCapture();
		response.setHeader("Content-Length", "6");
		response.getOutputStream().write("ab".getBytes(StandardCharsets.UTF_8));
		assertThat(servletResponse.getContentAsString()).isEqualTo("ab");
		response.getOutputStream().write("cdef".getBytes(StandardCharsets.UTF_8));
		assertThat(servletResponse.getContentAsString()).isEqualTo("abcde");
		response.flushToClient();
		assertThat(servletResponse.getContentAsString()).isEqualTo("abcdef");
	}

	@Test
	void aResetForgetsTheHeldEnd() throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.holdEnd();
		response.setContentLength(3);
		response.getOutputStream().write("abc".getBytes(StandardCharsets.UTF_8));
		response.reset();
		response.getOutputStream().write("xyz".getBytes(StandardCharsets.UTF_8));
		response.flushToClient();
		assertThat(servletResponse.getContentAsString()).isEqualTo("xyz");
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

	@Test
	void aCapturedSuccessIsStorable() throws IOException {
		CapturingResponse response = captured(201, "{}");
		assertThat(response.notStoredReason(1024, DEFAULT_POLICY)).isEqualTo(NotStoredReason.NONE);
	}

	@Test
	void aServerErrorOrARetryLaterStatusIsNotStorable() throws IOException {
		for (int status : new int[] { 500, 503, 408, 425, 429, 101 }) {
			assertThat(captured(status, "{}").notStoredReason(1024, DEFAULT_POLICY)).as("status %d", status)
				.isEqualTo(NotStoredReason.STATUS);
		}
		assertThat(captured(422, "{}").notStoredReason(1024, DEFAULT_POLICY)).isEqualTo(NotStoredReason.NONE);
	}

	@Test
	void theStatusesStoredFollowThePolicy() throws IOException {
		ResponseStoragePolicy policy = ResponseStoragePolicy.of(List.of("2xx", "5xx"), List.of("503"));
		assertThat(captured(500, "{}").notStoredReason(1024, policy)).isEqualTo(NotStoredReason.NONE);
		assertThat(captured(201, "{}").notStoredReason(1024, policy)).isEqualTo(NotStoredReason.NONE);
		assertThat(captured(503, "{}").notStoredReason(1024, policy)).isEqualTo(NotStoredReason.STATUS);
		assertThat(captured(422, "{}").notStoredReason(1024, policy)).isEqualTo(NotStoredReason.STATUS);
	}

	@Test
	void aResponseWrittenBeforeCaptureIsNotCapturedWhateverFollows() throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.getWriter().write("written by a filter");
		response.startCapture(1024);
		assertThat(response.isCaptureFailed()).isTrue();
		response.stopCapture();
		response.setStatus(500);
		assertThat(response.notStoredReason(1024, DEFAULT_POLICY)).as("the first reason stays")
			.isEqualTo(NotStoredReason.NOT_CAPTURED);
	}

	@Test
	void aStreamedResponseIsNotStorableWhateverItsStatus() throws IOException {
		CapturingResponse response = captured(500, "first");
		response.stopCapture();
		assertThat(response.notStoredReason(1024, DEFAULT_POLICY)).isEqualTo(NotStoredReason.STREAMING);
	}

	@Test
	void aServerErrorOverTheLimitIsAStatusFirst() throws IOException {
		CapturingResponse tooLarge = captured(200, "x".repeat(20));
		tooLarge.getOutputStream().write("y".repeat(20).getBytes(StandardCharsets.UTF_8));
		assertThat(tooLarge.isOverflowed()).isTrue();
		assertThat(tooLarge.notStoredReason(32, DEFAULT_POLICY)).isEqualTo(NotStoredReason.TOO_LARGE);
		tooLarge.setStatus(500);
		assertThat(tooLarge.notStoredReason(32, DEFAULT_POLICY)).isEqualTo(NotStoredReason.STATUS);
	}

	@Test
	void aResponseBeyondTheBudgetIsOverBudget() throws IOException {
		CapturingResponse response = new CapturingResponse(new MockHttpServletResponse(), new BufferBudget(16));
		response.startCapture(1024);
		response.getOutputStream().write("z".repeat(40).getBytes(StandardCharsets.UTF_8));
		assertThat(response.notStoredReason(1024, DEFAULT_POLICY)).isEqualTo(NotStoredReason.OVER_BUDGET);
	}

	@Test
	void aHeldResponseIsJudgedByItsSizeAtTheEnd() throws IOException {
		CapturingResponse response = new CapturingResponse(new MockHttpServletResponse());
		response.startHolding();
		response.getOutputStream().write("w".repeat(100).getBytes(StandardCharsets.UTF_8));
		assertThat(response.isCapturing()).as("held whole whatever its size").isTrue();
		assertThat(response.notStoredReason(1024, DEFAULT_POLICY)).isEqualTo(NotStoredReason.NONE);
		assertThat(response.notStoredReason(99, DEFAULT_POLICY)).isEqualTo(NotStoredReason.TOO_LARGE);
		response.setStatus(503);
		assertThat(response.notStoredReason(99, DEFAULT_POLICY)).as("a failure rolls back, however large")
			.isEqualTo(NotStoredReason.STATUS);
	}

	@Test
	void anErrorSentWhileHeldIsAnErrorPageButOnlyAStatusWhileCaptured() throws IOException {
		CapturingResponse held = new CapturingResponse(new MockHttpServletResponse());
		held.startHolding();
		held.sendError(404);
		assertThat(held.isErrorSent()).isTrue();
		assertThat(held.notStoredReason(1024, DEFAULT_POLICY)).as("the container renders the page after the commit")
			.isEqualTo(NotStoredReason.ERROR_PAGE);
		CapturingResponse capturedOnly = new CapturingResponse(new MockHttpServletResponse());
		capturedOnly.startCapture(1024);
		capturedOnly.sendError(404);
		assertThat(capturedOnly.isErrorSent()).isTrue();
		assertThat(capturedOnly.notStoredReason(1024, DEFAULT_POLICY)).as("what the client got: its status")
			.isEqualTo(NotStoredReason.NONE);
	}

	@Test
	void aRedirectWhileHeldStaysHeld() throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.startHolding();
		response.sendRedirect("/orders/1");
		assertThat(servletResponse.isCommitted()).as("not sent before the commit").isFalse();
		assertThat(servletResponse.getHeader("Location")).isEqualTo("/orders/1");
		assertThat(response.getStatus()).isEqualTo(302);
		assertThat(response.isCapturing()).isTrue();
		assertThat(response.notStoredReason(1024, DEFAULT_POLICY)).isEqualTo(NotStoredReason.NONE);
	}

	private static CapturingResponse captured(int status, String body) throws IOException {
		CapturingResponse response = new CapturingResponse(new MockHttpServletResponse());
		response.startCapture(32);
		response.setStatus(status);
		response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
		return response;
	}

}
