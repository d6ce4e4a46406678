package dev.idempo.webflux.testapp;

import java.util.UUID;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Annotated WebFlux handlers of the body styles "The request flow" distinguishes: a
 * {@code Flux} of a JSON body (one array, stored), a plain value, an NDJSON stream (not
 * stored) and a response larger than {@code idempo.max-response-size} (not stored). Each
 * response carries a nonce, so a replay is told from a second run by its bytes.
 *
 * @author idempo
 */
@RestController
@RequestMapping("/b")
class ReactiveBodiesController {

	/** Larger than the default idempo.max-response-size (1 MB). */
	private static final int LARGE = 1024 * 1024 + 1;

	private final ReactiveExecutions executions;

	ReactiveBodiesController(ReactiveExecutions executions) {
		this.executions = executions;
	}

	record Line(int execution, int line, String nonce) {
	}

	@PostMapping("/list")
	@Idempotent
	Flux<Line> list(@RequestBody Mono<String> body) {
		return body.flatMapMany((ignored) -> {
			int execution = this.executions.increment("list");
			String nonce = UUID.randomUUID().toString();
			return Flux.range(1, 3).map((i) -> new Line(execution, i, nonce));
		});
	}

	@PostMapping("/plain")
	@Idempotent
	Line plain() {
		return new Line(this.executions.increment("plain"), 1, UUID.randomUUID().toString());
	}

	@PostMapping(path = "/ndjson", produces = MediaType.APPLICATION_NDJSON_VALUE)
	@Idempotent
	Flux<Line> ndjson() {
		return Flux.defer(() -> {
			int execution = this.executions.increment("ndjson");
			String nonce = UUID.randomUUID().toString();
			return Flux.range(1, 3).map((i) -> new Line(execution, i, nonce));
		});
	}

	@PostMapping(path = "/large", produces = MediaType.TEXT_PLAIN_VALUE)
	@Idempotent
	Mono<String> large() {
		return Mono.fromSupplier(() -> this.executions.increment("large") + "x".repeat(LARGE));
	}

	@PostMapping("/echo")
	@Idempotent
	Mono<String> echo(@RequestBody Flux<DataBuffer> body) {
		// counted as it streams: larger than the codecs' in-memory limit
		return body.map((buffer) -> {
			int bytes = buffer.readableByteCount();
			DataBufferUtils.release(buffer);
			return bytes;
		}).reduce(0, Integer::sum).map((bytes) -> this.executions.increment("echo") + ":" + bytes);
	}

}
