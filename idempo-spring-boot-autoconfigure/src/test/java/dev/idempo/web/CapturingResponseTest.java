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

}
