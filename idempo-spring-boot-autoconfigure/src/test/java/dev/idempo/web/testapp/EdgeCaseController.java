package dev.idempo.web.testapp;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.http.HttpServletResponse;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * Handlers for the corners of the servlet API.
 *
 * @author idempo
 */
@RestController
@RequestMapping("/edge")
public class EdgeCaseController {

	private final Executions executions;

	/** Running Callables of {@link #slowCallable()}, and the most seen at once. */
	public final AtomicInteger running = new AtomicInteger();

	public final AtomicInteger maxRunning = new AtomicInteger();

	public volatile CountDownLatch callableRelease = new CountDownLatch(1);

	public volatile CountDownLatch callableEnded = new CountDownLatch(1);

	public EdgeCaseController(Executions executions) {
		this.executions = executions;
	}

	@PostMapping("/slow-callable")
	@Idempotent
	Callable<Map<String, Object>> slowCallable() {
		return () -> {
			int now = this.running.incrementAndGet();
			this.maxRunning.accumulateAndGet(now, Math::max);
			int execution = this.executions.increment("slow-callable");
			try {
				// ignores interruption, like much real work does
				long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
				boolean released = false;
				while (!released && System.nanoTime() < deadline) {
					try {
						released = this.callableRelease.await(50, TimeUnit.MILLISECONDS);
					}
					catch (InterruptedException ex) {
						// carry on regardless
					}
				}
			}
			finally {
				this.running.decrementAndGet();
				this.callableEnded.countDown();
			}
			return Map.of("execution", execution);
		};
	}

	@PostMapping("/mono")
	@Idempotent
	Mono<Map<String, Object>> mono() {
		return Mono.fromSupplier(() -> Map.of("execution", this.executions.increment("mono")));
	}

	@PostMapping("/object-sse")
	@Idempotent
	Object objectSse() throws IOException {
		int execution = this.executions.increment("object-sse");
		SseEmitter emitter = new SseEmitter(10_000L);
		emitter.send("event of execution " + execution);
		emitter.complete();
		return emitter;
	}

	@PostMapping("/partial-then-throw")
	@Idempotent
	void partialThenThrow(HttpServletResponse response) throws IOException {
		this.executions.increment("partial-then-throw");
		response.getWriter().write("PARTIAL-");
		throw new PartialFailure();
	}

	@PostMapping(path = "/signed", consumes = MediaType.APPLICATION_JSON_VALUE)
	@Idempotent
	Map<String, Object> signed(@RequestBody Map<String, Object> body) {
		return Map.of("execution", this.executions.increment("signed"), "echo", body);
	}

	@PostMapping("/writer")
	void unannotatedWriter(HttpServletResponse response) throws IOException {
		response.setContentType("text/plain");
		response.getWriter().write("hi");
	}

	@ExceptionHandler
	@ResponseStatus(HttpStatus.CONFLICT)
	void partialFailure(PartialFailure ex, HttpServletResponse response) throws IOException {
		response.getWriter().write("ERROR");
	}

	static class PartialFailure extends RuntimeException {

	}

}
