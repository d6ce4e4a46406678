package dev.idempo.web;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Random;

import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.idempo.core.Digests;
import dev.idempo.core.RequestFingerprints;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Reading the body for the fingerprint, whatever the declared length says.
 *
 * @author idempo
 */
class BufferedBodyRequestTests {

	@ParameterizedTest
	@ValueSource(ints = { 0, 1, 300, 8192, 100_000 })
	void bodyIsReadWholeAndTheHandlerReadsItAgain(int size) throws IOException {
		byte[] content = bytes(size);
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, content.length));
		assertThat(request.body(1024 * 1024)).isEqualTo(content);
		assertThat(request.getInputStream().readAllBytes()).isEqualTo(content);
	}

	@ParameterizedTest
	@ValueSource(longs = { -1, 0, 10, 299, 301, 5_000_000 })
	void declaredLengthIsOnlyAHint(long declared) throws IOException {
		byte[] content = bytes(300);
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, declared));
		assertThat(request.body(1024 * 1024)).isEqualTo(content);
	}

	@Test
	void bodyOfExactlyTheLimitIsReadAndOneMoreByteIsTooLarge() throws IOException {
		assertThat(new BufferedBodyRequest(post(bytes(100), 100)).body(100)).hasSize(100);
		assertThatExceptionOfType(BufferedBodyRequest.RequestTooLargeException.class)
			.isThrownBy(() -> new BufferedBodyRequest(post(bytes(101), 101)).body(100));
		assertThatExceptionOfType(BufferedBodyRequest.RequestTooLargeException.class)
			.isThrownBy(() -> new BufferedBodyRequest(post(bytes(5000), -1)).body(100))
			.satisfies((ex) -> assertThat(ex.getMaxSize()).isEqualTo(100));
	}

	@Test
	void bytesAFilterReadFirstAreKept() throws IOException {
		byte[] content = bytes(5000);
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, content.length));
		InputStream in = request.getInputStream();
		byte[] head = in.readNBytes(1234);
		assertThat(head).hasSize(1234);
		assertThat(request.body(1024 * 1024)).isEqualTo(content);
		assertThatExceptionOfType(BufferedBodyRequest.RequestTooLargeException.class)
			.isThrownBy(() -> readFirstThenBody(content, 1234, 4999));
	}

	@Test
	void aBodyRefusedByTheBudgetGivesItsShareBackAtOnceSoThatAnotherFits() throws IOException {
		BufferBudget budget = new BufferBudget(400_000);
		byte[] large = bytes(200_000);
		BufferedBodyRequest first = new BufferedBodyRequest(post(large, large.length), budget);
		BufferedBodyRequest second = new BufferedBodyRequest(post(large, large.length), budget);
		assertThat(first.body(1024 * 1024)).isEqualTo(large);
		long firstHolds = budget.used();
		assertThat(firstHolds).as("the buffer, grown by doubling").isEqualTo(262_144);
		// the second reserves 64 KiB, then 128 KiB, and 256 KiB no longer fits
		assertThatExceptionOfType(BufferedBodyRequest.BudgetExceededException.class)
			.isThrownBy(() -> second.body(1024 * 1024));
		assertThat(budget.used()).as("only the first body's share, before the second request ends")
			.isEqualTo(firstHolds);
		first.releaseBudget();
		BufferedBodyRequest third = new BufferedBodyRequest(post(large, large.length), budget);
		assertThat(third.body(1024 * 1024)).isEqualTo(large);
		long thirdHolds = budget.used();
		second.releaseBudget();
		assertThat(budget.used()).as("the refused request gives nothing back twice").isEqualTo(thirdHolds);
		third.releaseBudget();
		assertThat(budget.used()).isZero();
	}

	private static byte[] readFirstThenBody(byte[] content, int first, long maxSize) throws IOException {
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, content.length));
		request.getInputStream().readNBytes(first);
		return request.body(maxSize);
	}

	@ParameterizedTest
	@ValueSource(ints = { 0, 10, 4999, 5000 })
	void aStreamedBodyIsFingerprintedWholeWhateverTheHandlerRead(int readByHandler) throws IOException {
		byte[] content = bytes(5000);
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, content.length));
		byte[] filterRead = request.getInputStream().readNBytes(3);
		request.stopRecording();
		StreamedBody streamed = new StreamedBody(RequestFingerprints.streamed("POST", "/orders", null, content.length),
				content.length);
		request.stream(streamed);
		byte[] handlerRead = request.getInputStream().readNBytes(Math.max(0, readByHandler - 3));
		assertThat(filterRead.length + handlerRead.length).isEqualTo(Math.max(3, readByHandler));
		request.finishStream(10_000);
		assertThat(streamed.whole()).isEqualTo(RequestFingerprints.of("POST", "/orders", null, content));
	}

	@Test
	void aStreamedBodyLongerThanDeclaredIsAFiltersAndIsDigestedAsRead() throws IOException {
		byte[] content = bytes(100);
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, 99));
		request.stopRecording();
		MessageDigest expected = RequestFingerprints.streamed("POST", "/orders", null, 99);
		expected.update(content);
		StreamedBody streamed = new StreamedBody(RequestFingerprints.streamed("POST", "/orders", null, 99), 99);
		request.stream(streamed);
		request.finishStream(10_000);
		assertThat(streamed.whole()).isEqualTo(Digests.hex(expected));
	}

	@Test
	void aStreamedBodyFromTheContainerShorterThanDeclaredFailsTheApplicationsReadAndHasNoWholeDigest()
			throws IOException {
		byte[] content = bytes(100);
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, 101));
		request.stopRecording();
		StreamedBody streamed = new StreamedBody(RequestFingerprints.streamed("POST", "/orders", null, 101), 101);
		request.stream(streamed);
		assertThatExceptionOfType(EOFException.class)
			.isThrownBy(() -> request.getInputStream().transferTo(OutputStream.nullOutputStream()));
		assertThat(streamed.hasApplicationReadFailed()).isTrue();
		request.finishStream(10_000);
		assertThat(streamed.whole()).isNull();
	}

	@Test
	void aStreamedBodyLongerThanTheLimitFailsAndKeepsTheDigestOfItsMarkedPrefix() throws IOException {
		byte[] content = bytes(5000);
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, 100));
		request.stopRecording();
		StreamedBody streamed = new StreamedBody(RequestFingerprints.streamed("POST", "/orders", null, 100), 100);
		request.stream(streamed);
		request.getInputStream().readNBytes(40);
		assertThat(streamed.markPrefix(30)).isFalse();
		assertThat(streamed.markPrefix(40)).isTrue();
		request.finishStream(1000);
		assertThat(streamed.whole()).isNull();
		MessageDigest expected = RequestFingerprints.streamed("POST", "/orders", null, 100);
		expected.update(content, 0, 40);
		assertThat(streamed.prefix()).isEqualTo(Digests.hex(expected));
	}

	@ParameterizedTest
	@ValueSource(ints = { 0, 1, 16 * 1024 - 1, 16 * 1024, 20_000 })
	void aPrefixMarkedAheadIsDigestedWhereverTheReadsSplitTheBody(int prefixLength) throws IOException {
		byte[] content = bytes(40_000);
		BufferedBodyRequest request = new BufferedBodyRequest(post(content, content.length));
		request.stopRecording();
		StreamedBody streamed = new StreamedBody(RequestFingerprints.streamed("POST", "/orders", null, content.length),
				content.length);
		request.stream(streamed);
		assertThat(streamed.markPrefix(prefixLength)).isTrue();
		request.getInputStream().read();
		request.finishStream(100_000);
		MessageDigest expected = RequestFingerprints.streamed("POST", "/orders", null, content.length);
		expected.update(content, 0, prefixLength);
		assertThat(streamed.prefix()).isEqualTo(Digests.hex(expected));
		assertThat(streamed.whole()).isEqualTo(RequestFingerprints.of("POST", "/orders", null, content));
	}

	private static HttpServletRequestWrapper post(byte[] content, long declaredLength) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
		request.setContent(content);
		return new HttpServletRequestWrapper(request) {

			@Override
			public long getContentLengthLong() {
				return declaredLength;
			}

			@Override
			public int getContentLength() {
				return (int) declaredLength;
			}

		};
	}

	private static byte[] bytes(int size) {
		byte[] bytes = new byte[size];
		new Random(size).nextBytes(bytes);
		if (size > 0) {
			bytes[0] = "{".getBytes(StandardCharsets.UTF_8)[0];
		}
		return bytes;
	}

}
