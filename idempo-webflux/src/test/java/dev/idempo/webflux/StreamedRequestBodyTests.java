package dev.idempo.webflux;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

import dev.idempo.core.RequestFingerprints;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebInputException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A body of declared length digested as it streams: the digest is the whole body's
 * fingerprint (that of the same bytes held whole) however the handler reads it, the
 * handler's buffers are its own (read positions untouched), and every buffer the handler
 * does not get is released. Buffers count their references, as Netty's do, so that a leak
 * shows as a count above zero.
 *
 * @author idempo
 */
class StreamedRequestBodyTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final Duration IDLE = Duration.ofSeconds(60);

	private final List<CountedDataBuffer> sent = new ArrayList<>();

	private static final String[] CHUNKS = { "{\"item\":", "\"pen\",", "\"quantity\":", "1}" };

	private static final String WHOLE = String.join("", CHUNKS);

	@Test
	void aHandlerThatReadsEverythingGetsTheBytesAsSentAndTheDigestIsTheWholeBodysFingerprint() {
		StreamedRequestBody body = body(CHUNKS, WHOLE.length());
		String read = DataBufferUtils.join(body.body()).map(StreamedRequestBodyTests::text).block(TIMEOUT);
		assertThat(read).isEqualTo(WHOLE);
		assertThat(body.digest().block(TIMEOUT)).isEqualTo(fingerprint(WHOLE));
		assertAllReleased();
	}

	@Test
	void aBodyNobodyReadIsDrainedAndReleasedForTheDigest() {
		StreamedRequestBody body = body(CHUNKS, WHOLE.length());
		assertThat(body.digest().block(TIMEOUT)).isEqualTo(fingerprint(WHOLE));
		assertAllReleased();
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> body.body().blockLast(TIMEOUT));
	}

	@Test
	void whatAHandlerThatCancelsLeavesIsDrainedAndReleasedWithoutReachingIt() {
		AtomicBoolean afterCancel = new AtomicBoolean();
		StreamedRequestBody body = body(CHUNKS, WHOLE.length());
		DataBuffer first = body.body().doOnCancel(() -> afterCancel.set(true)).next().block(TIMEOUT);
		assertThat(first).isNotNull();
		assertThat(text(first)).isEqualTo(CHUNKS[0]);
		assertThat(afterCancel).isTrue();
		assertThat(body.digest().block(TIMEOUT)).isEqualTo(fingerprint(WHOLE));
		assertAllReleased();
	}

	@Test
	void aBodyShorterThanDeclaredFailsTheHandlerAndTheDigest() {
		StreamedRequestBody body = body(CHUNKS, WHOLE.length() + 1);
		List<String> read = new ArrayList<>();
		assertThatExceptionOfType(ServerWebInputException.class)
			.isThrownBy(() -> body.body().map(StreamedRequestBodyTests::text).doOnNext(read::add).blockLast(TIMEOUT));
		assertThat(read).containsExactly(CHUNKS);
		assertThatExceptionOfType(ServerWebInputException.class).isThrownBy(() -> body.digest().block(TIMEOUT));
		assertAllReleased();
	}

	@Test
	void aBodyLongerThanTheLimitFails() {
		StreamedRequestBody body = new StreamedRequestBody(buffers(CHUNKS),
				RequestFingerprints.streamed("POST", "/orders", null, 10), 10, 10, IDLE, Schedulers.parallel());
		assertThatExceptionOfType(DataBufferLimitException.class).isThrownBy(() -> body.digest().block(TIMEOUT));
		assertAllReleased();
	}

	/**
	 * A filter before idempo's made the body longer than its declared length: the body
	 * fails (400) once the bytes run past it, as a body that ends short does, rather than
	 * giving a digest that neither the request the client sent nor the same bytes held
	 * whole would get.
	 */
	@Test
	void aBodyLongerThanDeclaredFailsTheHandlerAndTheDigest() {
		StreamedRequestBody body = body(CHUNKS, WHOLE.length() - 1);
		List<String> read = new ArrayList<>();
		assertThatExceptionOfType(ServerWebInputException.class)
			.isThrownBy(() -> body.body().map(StreamedRequestBodyTests::text).doOnNext(read::add).blockLast(TIMEOUT))
			.withMessageContaining("ran past its declared Content-Length " + (WHOLE.length() - 1));
		assertThat(read).containsExactly(CHUNKS[0], CHUNKS[1], CHUNKS[2]);
		assertThatExceptionOfType(ServerWebInputException.class).isThrownBy(() -> body.digest().block(TIMEOUT));
		assertAllReleased();
	}

	@Test
	void aBodyLongerThanDeclaredThatNobodyReadsFailsTheDigest() {
		StreamedRequestBody body = body(CHUNKS, WHOLE.length() - 1);
		assertThatExceptionOfType(ServerWebInputException.class).isThrownBy(() -> body.digest().block(TIMEOUT));
		assertAllReleased();
	}

	/**
	 * The client goes silent mid-body: once no byte came for the idle timeout while the
	 * handler asked for more, the body fails with 408 (the handler and the digest), and
	 * the server's body is cancelled; what arrives later is released, not relayed.
	 */
	@Test
	void aBodyThatGoesIdleWhileReadFailsWith408() {
		Sinks.Many<DataBuffer> source = Sinks.many().unicast().onBackpressureBuffer();
		AtomicBoolean cancelled = new AtomicBoolean();
		StreamedRequestBody body = body(source.asFlux().doOnCancel(() -> cancelled.set(true)), WHOLE.length(),
				Duration.ofMillis(200));
		source.tryEmitNext(counted(CHUNKS[0]));
		List<String> read = new ArrayList<>();
		long start = System.nanoTime();
		assertThatExceptionOfType(ResponseStatusException.class)
			.isThrownBy(() -> body.body().map(StreamedRequestBodyTests::text).doOnNext(read::add).blockLast(TIMEOUT))
			.satisfies((ex) -> assertThat(ex.getStatusCode()).isEqualTo(HttpStatus.REQUEST_TIMEOUT))
			.satisfies((ex) -> assertThat(StreamedRequestBody.isIdleTimeout(ex)).isTrue());
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
		assertThat(read).containsExactly(CHUNKS[0]);
		assertThat(cancelled).isTrue();
		assertThatExceptionOfType(ResponseStatusException.class).isThrownBy(() -> body.digest().block(TIMEOUT));
		assertAllReleased();
	}

	@Test
	void aBodyNobodyReadThatGoesIdleFailsTheDigestWith408() {
		Sinks.Many<DataBuffer> source = Sinks.many().unicast().onBackpressureBuffer();
		StreamedRequestBody body = body(source.asFlux(), WHOLE.length(), Duration.ofMillis(100));
		source.tryEmitNext(counted(CHUNKS[0]));
		assertThatExceptionOfType(ResponseStatusException.class).isThrownBy(() -> body.digest().block(TIMEOUT))
			.satisfies((ex) -> assertThat(ex.getStatusCode()).isEqualTo(HttpStatus.REQUEST_TIMEOUT));
		assertAllReleased();
	}

	/**
	 * Time counts only while the handler asks for bytes: a handler that holds a buffer
	 * for longer than the idle timeout before asking for the next one (a slow reader, a
	 * backend that reads slowly) is not a silent client, and neither is a body that
	 * nobody subscribed to yet.
	 */
	@Test
	void aSlowReaderIsNotTimedOut() throws InterruptedException {
		Sinks.Many<DataBuffer> source = Sinks.many().unicast().onBackpressureBuffer();
		StreamedRequestBody body = body(source.asFlux(), WHOLE.length(), Duration.ofMillis(100));
		for (String chunk : CHUNKS) {
			source.tryEmitNext(counted(chunk));
		}
		source.tryEmitComplete();
		Thread.sleep(300);
		List<String> read = new ArrayList<>();
		body.body().limitRate(1).map(StreamedRequestBodyTests::text).doOnNext((chunk) -> {
			read.add(chunk);
			try {
				Thread.sleep(250);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}).blockLast(TIMEOUT);
		assertThat(read).containsExactly(CHUNKS);
		assertThat(body.digest().block(TIMEOUT)).isEqualTo(fingerprint(WHOLE));
		assertAllReleased();
	}

	/**
	 * A body whose bytes keep coming, each within the idle timeout, is never timed out,
	 * however long it takes as a whole.
	 */
	@Test
	void aBodyWhoseBytesKeepComingIsNotTimedOut() {
		StreamedRequestBody body = body(buffers(CHUNKS).delayElements(Duration.ofMillis(120)), WHOLE.length(),
				Duration.ofMillis(300));
		String read = DataBufferUtils.join(body.body()).map(StreamedRequestBodyTests::text).block(TIMEOUT);
		assertThat(read).isEqualTo(WHOLE);
		assertThat(body.digest().block(TIMEOUT)).isEqualTo(fingerprint(WHOLE));
		assertAllReleased();
	}

	@Test
	void aFailingBodyFailsTheDigest() {
		StreamedRequestBody body = new StreamedRequestBody(
				buffers(CHUNKS).take(2).concatWith(Flux.error(new IllegalStateException("client went away"))),
				RequestFingerprints.streamed("POST", "/orders", null, WHOLE.length()), WHOLE.length(), 1024, IDLE,
				Schedulers.parallel());
		List<String> read = new ArrayList<>();
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> body.body().map(StreamedRequestBodyTests::text).doOnNext(read::add).blockLast(TIMEOUT))
			.withMessage("client went away");
		assertThat(read).containsExactly(CHUNKS[0], CHUNKS[1]);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> body.digest().block(TIMEOUT))
			.withMessage("client went away");
		assertAllReleased();
	}

	/**
	 * The bodies of one filter share one idle timer, and a body leaves it however it ends
	 * (read whole, drained, cut short, timed out, failed), so that the timer holds only
	 * the bodies being read.
	 */
	@Test
	void bodiesLeaveTheSharedIdleTimerHoweverTheyEnd() {
		IdleBodies idle = new IdleBodies(Duration.ofMillis(100), Schedulers.parallel());
		StreamedRequestBody read = shared(buffers(CHUNKS), WHOLE.length(), idle);
		assertThat(DataBufferUtils.join(read.body()).map(StreamedRequestBodyTests::text).block(TIMEOUT))
			.isEqualTo(WHOLE);
		StreamedRequestBody drained = shared(buffers(CHUNKS), WHOLE.length(), idle);
		assertThat(drained.digest().block(TIMEOUT)).isEqualTo(fingerprint(WHOLE));
		StreamedRequestBody shortBody = shared(buffers(CHUNKS), WHOLE.length() + 1, idle);
		assertThatExceptionOfType(ServerWebInputException.class).isThrownBy(() -> shortBody.digest().block(TIMEOUT));
		StreamedRequestBody failed = shared(buffers(CHUNKS).concatWith(Flux.error(new IllegalStateException("gone"))),
				WHOLE.length() + 1, idle);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> failed.digest().block(TIMEOUT));
		Sinks.Many<DataBuffer> silent = Sinks.many().unicast().onBackpressureBuffer();
		StreamedRequestBody timedOut = shared(silent.asFlux(), WHOLE.length(), idle);
		silent.tryEmitNext(counted(CHUNKS[0]));
		assertThatExceptionOfType(ResponseStatusException.class).isThrownBy(() -> timedOut.digest().block(TIMEOUT));
		assertThat(idle.watched()).isZero();
		assertAllReleased();
	}

	private static StreamedRequestBody shared(Flux<DataBuffer> source, long declared, IdleBodies idle) {
		return new StreamedRequestBody(source, RequestFingerprints.streamed("POST", "/orders", null, declared),
				declared, 1024, idle);
	}

	private StreamedRequestBody body(String[] chunks, long declared) {
		return body(buffers(chunks), declared, IDLE);
	}

	private static StreamedRequestBody body(Flux<DataBuffer> source, long declared, Duration idle) {
		return new StreamedRequestBody(source, RequestFingerprints.streamed("POST", "/orders", null, declared),
				declared, 1024, idle, Schedulers.parallel());
	}

	private Flux<DataBuffer> buffers(String[] chunks) {
		return Flux.fromArray(chunks).map((chunk) -> {
			CountedDataBuffer buffer = new CountedDataBuffer(
					DefaultDataBufferFactory.sharedInstance.wrap(chunk.getBytes(StandardCharsets.UTF_8)));
			this.sent.add(buffer);
			return buffer;
		});
	}

	private CountedDataBuffer counted(String chunk) {
		CountedDataBuffer buffer = new CountedDataBuffer(
				DefaultDataBufferFactory.sharedInstance.wrap(chunk.getBytes(StandardCharsets.UTF_8)));
		this.sent.add(buffer);
		return buffer;
	}

	private void assertAllReleased() {
		assertThat(this.sent).isNotEmpty().allSatisfy((buffer) -> assertThat(buffer.references).hasValue(0));
	}

	private static String fingerprint(String body) {
		return RequestFingerprints.of("POST", "/orders", null, body.getBytes(StandardCharsets.UTF_8));
	}

	private static String text(DataBuffer buffer) {
		try {
			return buffer.toString(StandardCharsets.UTF_8);
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

}
