package dev.idempo.webflux;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.idempo.core.IdempotencyListener.NotStoredReason;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

/**
 * The response of a protected request: a response that will be stored is held back whole,
 * stored (or its key released), and only then written, so that a retry sent after the
 * response arrived never meets its own key in progress. A streaming response
 * ({@code text/event-stream}, {@code application/x-ndjson}, or written with flushes) and
 * one of a handler that does not store go to the client as written, and the key is
 * released before the response ends.
 *
 * @author idempo
 */
final class CapturingServerHttpResponse extends ServerHttpResponseDecorator {

	private final ReactiveExecution execution;

	private final Predicate<String> replayable;

	CapturingServerHttpResponse(ServerHttpResponse delegate, ReactiveExecution execution,
			Predicate<String> replayable) {
		super(delegate);
		this.execution = execution;
		this.replayable = replayable;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		NotStoredReason reason = passThroughReason();
		if (reason != NotStoredReason.NONE) {
			return super.writeWith(releasingAtTheEnd(Flux.from(body), reason));
		}
		return DataBufferUtils.join(body)
			.map(CapturingServerHttpResponse::bytes)
			.defaultIfEmpty(new byte[0])
			.onErrorResume((ex) -> this.execution.fail().then(Mono.error(ex)))
			.flatMap((bytes) -> this.execution.settle(status(), headers(), bytes)
				.then(Mono.defer(() -> super.writeWith(Mono.just(bufferFactory().wrap(bytes))))));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		NotStoredReason reason = this.execution.presetReason();
		return super.writeAndFlushWith(Flux.from(body)
			.concatWith(Mono.defer(() -> this.execution
				.releaseUnstored((reason != NotStoredReason.NONE) ? reason : NotStoredReason.STREAMING)
				.then(Mono.empty()))));
	}

	@Override
	public Mono<Void> setComplete() {
		return settleWithoutBody().then(Mono.defer(super::setComplete));
	}

	/**
	 * The handler finished without writing a body: what it set is the whole response.
	 * @return completes once stored or released
	 */
	Mono<Void> settleWithoutBody() {
		return this.execution.settle(status(), headers(), new byte[0]);
	}

	private NotStoredReason passThroughReason() {
		NotStoredReason preset = this.execution.presetReason();
		if (preset != NotStoredReason.NONE) {
			return preset;
		}
		return isStreaming(getHeaders().getContentType()) ? NotStoredReason.STREAMING : NotStoredReason.NONE;
	}

	private Flux<DataBuffer> releasingAtTheEnd(Flux<? extends DataBuffer> body, NotStoredReason reason) {
		return Flux.<DataBuffer>from(body)
			.concatWith(Mono.defer(() -> this.execution.releaseUnstored(reason).then(Mono.empty())));
	}

	static boolean isStreaming(@Nullable MediaType type) {
		if (type == null) {
			return false;
		}
		String value = (type.getType() + "/" + type.getSubtype()).toLowerCase(Locale.ROOT);
		return value.equals("text/event-stream") || value.equals("application/x-ndjson");
	}

	private int status() {
		HttpStatusCode status = getStatusCode();
		return (status != null) ? status.value() : 200;
	}

	private Map<String, List<String>> headers() {
		HttpHeaders source = getHeaders();
		Map<String, List<String>> headers = new LinkedHashMap<>();
		List<String> contentType = source.get(HttpHeaders.CONTENT_TYPE);
		if (contentType != null && !contentType.isEmpty()) {
			headers.put(HttpHeaders.CONTENT_TYPE, List.of(contentType.get(0)));
		}
		source.forEach((name, values) -> {
			if (!name.equalsIgnoreCase("Content-Type") && this.replayable.test(name)) {
				headers.put(name, List.copyOf(values));
			}
		});
		return headers;
	}

	private static byte[] bytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

}
