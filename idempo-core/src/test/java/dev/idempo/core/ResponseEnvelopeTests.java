package dev.idempo.core;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.Deflater;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The stored format.
 *
 * @author idempo
 */
class ResponseEnvelopeTests {

	@Test
	void roundTripsStatusHeadersAndBody() {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		headers.put("Content-Type", List.of("application/json"));
		headers.put("Location", List.of("/payments/1"));
		headers.put("Vary", List.of("Origin", "Accept-Encoding"));
		headers.put("X-Ünïcode", List.of("välue"));
		CapturedResponse response = new CapturedResponse(201, headers, "{\"id\":1}".getBytes(StandardCharsets.UTF_8));
		CapturedResponse decoded = ResponseEnvelope.decode(ResponseEnvelope.encode(response));
		assertThat(decoded).isEqualTo(response);
		assertThat(decoded.headers().keySet()).containsExactly("Content-Type", "Location", "Vary", "X-Ünïcode");
	}

	@Test
	void emptyBodyRoundTrips() {
		CapturedResponse response = new CapturedResponse(204, Map.of(), new byte[0]);
		assertThat(ResponseEnvelope.decode(ResponseEnvelope.encode(response))).isEqualTo(response);
	}

	@Test
	void compressesWhenThatPays() {
		byte[] repetitive = "{\"item\":\"pen\"},".repeat(1000).getBytes(StandardCharsets.UTF_8);
		byte[] envelope = ResponseEnvelope.encode(new CapturedResponse(200, Map.of(), repetitive));
		assertThat(envelope[5] & 1).isEqualTo(1);
		assertThat(envelope.length).isLessThan(repetitive.length / 5);
		assertThat(ResponseEnvelope.decode(envelope).body()).isEqualTo(repetitive);
	}

	@Test
	void leavesIncompressibleAndSmallBodiesRaw() {
		byte[] random = new byte[8192];
		new Random(1).nextBytes(random);
		byte[] envelope = ResponseEnvelope.encode(new CapturedResponse(200, Map.of(), random));
		assertThat(envelope[5] & 1).isZero();
		assertThat(ResponseEnvelope.decode(envelope).body()).isEqualTo(random);
		byte[] small = ResponseEnvelope
			.encode(new CapturedResponse(200, Map.of(), "ok".getBytes(StandardCharsets.UTF_8)));
		assertThat(small[5] & 1).isZero();
	}

	@Test
	void version1LayoutIsStable() {
		// a record written by 0.1.0 must stay readable by every later version: pin its
		// bytes
		CapturedResponse response = new CapturedResponse(201, Map.of("A", List.of("b")), new byte[] { 7 });
		byte[] envelope = ResponseEnvelope.encode(response);
		assertThat(HexFormat.of().formatHex(envelope)).isEqualTo("49444d50" + "01" + "00" + "00c9" + "00000001"
				+ "00000001" + "41" + "00000001" + "00000001" + "62" + "00000001" + "07");
		assertThat(ResponseEnvelope.decode(envelope)).isEqualTo(response);
	}

	@Test
	void bodyInALargerArrayEncodesAsTheSameBody() {
		byte[] held = "....{\"id\":1}........".getBytes(StandardCharsets.UTF_8);
		Map<String, List<String>> headers = Map.of("Content-Type", List.of("application/json"));
		assertThat(ResponseEnvelope.encode(201, headers, held, 4, 8)).isEqualTo(ResponseEnvelope
			.encode(new CapturedResponse(201, headers, "{\"id\":1}".getBytes(StandardCharsets.UTF_8))));
	}

	@Test
	void compressedEnvelopeIsTheRawOneWithItsPayloadDeflated() {
		byte[] repetitive = "{\"item\":\"pen\"},".repeat(1000).getBytes(StandardCharsets.UTF_8);
		CapturedResponse response = new CapturedResponse(200, Map.of("A", List.of("b")), repetitive);
		byte[] raw = ResponseEnvelope.encode(new CapturedResponse(200, Map.of("A", List.of("b")), new byte[0]));
		// the raw layout, rebuilt by hand around the body, deflated in one go
		byte[] payload = new byte[raw.length - 6 - 4 + 4 + repetitive.length];
		System.arraycopy(raw, 6, payload, 0, raw.length - 6 - 4);
		int at = raw.length - 6 - 4;
		payload[at + 2] = (byte) (repetitive.length >>> 8);
		payload[at + 3] = (byte) repetitive.length;
		System.arraycopy(repetitive, 0, payload, at + 4, repetitive.length);
		Deflater deflater = new Deflater(Deflater.BEST_SPEED);
		deflater.setInput(payload);
		deflater.finish();
		byte[] deflated = new byte[payload.length];
		int length = deflater.deflate(deflated);
		deflater.end();
		byte[] envelope = ResponseEnvelope.encode(response);
		assertThat(HexFormat.of().formatHex(envelope, 0, 6)).isEqualTo("49444d500101");
		assertThat(java.util.Arrays.copyOfRange(envelope, 6, envelope.length))
			.isEqualTo(java.util.Arrays.copyOf(deflated, length));
	}

	@Test
	void rejectsForeignCorruptAndNewerData() {
		assertThatIllegalArgumentException().isThrownBy(() -> ResponseEnvelope.decode(new byte[0]));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> ResponseEnvelope.decode("not an envelope".getBytes(StandardCharsets.UTF_8)));
		byte[] envelope = ResponseEnvelope.encode(new CapturedResponse(200, Map.of(), new byte[10]));
		byte[] newer = envelope.clone();
		newer[4] = (byte) (ResponseEnvelope.VERSION + 1);
		assertThatIllegalArgumentException().isThrownBy(() -> ResponseEnvelope.decode(newer))
			.withMessageContaining("version");
		byte[] truncated = java.util.Arrays.copyOf(envelope, envelope.length - 3);
		assertThatIllegalArgumentException().isThrownBy(() -> ResponseEnvelope.decode(truncated));
	}

}
