package dev.idempo.web.testapp;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;

import dev.idempo.Idempotent;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseCookie;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.ServletRequestBindingException;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * One handler per response style.
 *
 * @author idempo
 */
@RestController
@RequestMapping("/t")
public class TestController {

	private final Executions executions;

	public TestController(Executions executions) {
		this.executions = executions;
	}

	public record Order(String id, int execution, String item, int quantity) {
	}

	public record OrderRequest(String item, int quantity) {
	}

	public record ValidatedOrderRequest(@NotBlank String item, @Positive int quantity) {
	}

	@PostMapping("/orders")
	@Idempotent
	ResponseEntity<Order> createOrder(@RequestBody OrderRequest request) {
		int execution = this.executions.increment("orders");
		Order order = new Order("ord-" + execution, execution, request.item(), request.quantity());
		return ResponseEntity.created(URI.create("/t/orders/" + order.id()))
			.header("X-Order-Execution", Integer.toString(execution))
			.header(HttpHeaders.SET_COOKIE, ResponseCookie.from("session", "s" + execution).build().toString())
			.body(order);
	}

	@PostMapping("/validated-orders")
	@Idempotent
	ResponseEntity<Order> createValidatedOrder(@Valid @RequestBody ValidatedOrderRequest request) {
		int execution = this.executions.increment("validated-orders");
		return ResponseEntity.status(HttpStatus.CREATED)
			.body(new Order("ord-" + execution, execution, request.item(), request.quantity()));
	}

	@GetMapping("/orders")
	@Idempotent
	Map<String, Object> listOrders() {
		return Map.of("execution", this.executions.increment("list"));
	}

	@PostMapping("/object")
	@Idempotent
	Order object(@RequestBody(required = false) String body) {
		int execution = this.executions.increment("object");
		return new Order("o" + execution, execution, "thing", 1);
	}

	@PostMapping("/entity-without-body")
	@Idempotent
	ResponseEntity<Void> entityWithoutBody() {
		int execution = this.executions.increment("entity-without-body");
		return ResponseEntity.accepted().header("X-Execution", Integer.toString(execution)).build();
	}

	@PostMapping("/void")
	@Idempotent
	@ResponseStatus(HttpStatus.CREATED)
	void voidWithStatus(HttpServletResponse response) {
		int execution = this.executions.increment("void");
		response.setHeader("X-Execution", Integer.toString(execution));
	}

	@PostMapping(path = "/string", produces = MediaType.TEXT_PLAIN_VALUE)
	@Idempotent
	String string() {
		return "plain text, execution " + this.executions.increment("string") + ", ünïcödé";
	}

	/**
	 * A finite text reply in whatever type the client accepts (String converts to any).
	 */
	@PostMapping("/text")
	@Idempotent
	String text() {
		return "data: execution " + this.executions.increment("text") + "\n\n";
	}

	@PostMapping(path = "/bytes", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
	@Idempotent
	byte[] bytes(@RequestParam(defaultValue = "4096") int size) {
		int execution = this.executions.increment("bytes");
		byte[] bytes = new byte[size];
		new Random(execution).nextBytes(bytes);
		return bytes;
	}

	@PostMapping("/problem")
	@Idempotent
	Order problem() {
		int execution = this.executions.increment("problem");
		throw new OutOfStockException("execution " + execution);
	}

	@PostMapping("/response-status-exception")
	@Idempotent
	Order responseStatusException() {
		this.executions.increment("response-status-exception");
		throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no such thing");
	}

	@PostMapping("/send-error-500")
	@Idempotent
	void sendError500(HttpServletResponse response) throws IOException {
		this.executions.increment("send-error-500");
		response.sendError(500, "storage offline");
	}

	@PostMapping("/callable")
	@Idempotent
	Callable<Order> callable() {
		return () -> {
			int execution = this.executions.increment("callable");
			return new Order("c" + execution, execution, "async", 1);
		};
	}

	@PostMapping("/deferred")
	@Idempotent
	DeferredResult<Order> deferred() {
		DeferredResult<Order> result = new DeferredResult<>(10_000L);
		new Thread(() -> {
			int execution = this.executions.increment("deferred");
			result.setResult(new Order("d" + execution, execution, "deferred", 1));
		}).start();
		return result;
	}

	@PostMapping("/future")
	@Idempotent
	CompletableFuture<ResponseEntity<Order>> future() {
		return CompletableFuture.supplyAsync(() -> {
			int execution = this.executions.increment("future");
			return ResponseEntity.status(HttpStatus.CREATED).body(new Order("f" + execution, execution, "future", 1));
		});
	}

	/**
	 * A handler that has had its effect and then throws an exception of a type Spring MVC
	 * also raises while it resolves arguments.
	 */
	@PostMapping("/own-binding-failure")
	@Idempotent
	Order ownBindingFailure() throws ServletRequestBindingException {
		int execution = this.executions.increment("own-binding-failure");
		throw new ServletRequestBindingException("the handler's own check failed in execution " + execution);
	}

	/** The same from an asynchronous handler's {@code Callable}. */
	@PostMapping("/callable-own-binding-failure")
	@Idempotent
	Callable<Order> callableOwnBindingFailure() {
		return () -> {
			int execution = this.executions.increment("callable-own-binding-failure");
			throw new ServletRequestBindingException("the handler's own check failed in execution " + execution);
		};
	}

	/** A {@code Callable} that fails with a client error of its own. */
	@PostMapping("/callable-status-exception")
	@Idempotent
	Callable<Order> callableStatusException() {
		return () -> {
			this.executions.increment("callable-status-exception");
			throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no such thing");
		};
	}

	@PostMapping("/status/{status}")
	@Idempotent
	ResponseEntity<String> status(@PathVariable int status) {
		int execution = this.executions.increment("status-" + status);
		return ResponseEntity.status(status)
			.contentType(MediaType.TEXT_PLAIN)
			.body("status " + status + " execution " + execution);
	}

	@PostMapping("/throw")
	@Idempotent
	Order fail() {
		this.executions.increment("throw");
		throw new IllegalStateException("boom");
	}

	@PostMapping("/large-list")
	@Idempotent
	List<String> largeList(@RequestParam int items) {
		this.executions.increment("large-list");
		return itemList(items);
	}

	static List<String> itemList(int items) {
		List<String> list = new ArrayList<>();
		for (int i = 0; i < items; i++) {
			list.add("item-" + i + "-".repeat(50));
		}
		return list;
	}

	@PostMapping("/stream")
	@Idempotent
	StreamingResponseBody stream() {
		int execution = this.executions.increment("stream");
		return (out) -> {
			for (int i = 0; i < 3; i++) {
				out.write(("chunk " + i + " of execution " + execution + "\n").getBytes(StandardCharsets.UTF_8));
				out.flush();
			}
		};
	}

	@PostMapping("/sse")
	@Idempotent
	SseEmitter sse() throws IOException {
		int execution = this.executions.increment("sse");
		SseEmitter emitter = new SseEmitter(10_000L);
		new Thread(() -> {
			try {
				emitter.send("event of execution " + execution);
				emitter.complete();
			}
			catch (IOException ex) {
				emitter.completeWithError(ex);
			}
		}).start();
		return emitter;
	}

	@PostMapping("/no-cache")
	@Idempotent(cacheResponse = false)
	Map<String, Object> noCache() {
		return Map.of("execution", this.executions.increment("no-cache"));
	}

	/** As {@link #noCache()}, with a body whose length is declared. */
	@PostMapping(path = "/no-cache-text", produces = MediaType.TEXT_PLAIN_VALUE)
	@Idempotent(cacheResponse = false)
	String noCacheText() {
		return "not stored, execution " + this.executions.increment("no-cache-text");
	}

	/** A handler that closes its response's stream itself, which ends a chunked body. */
	@PostMapping("/no-cache-closed")
	@Idempotent(cacheResponse = false)
	void noCacheClosed(HttpServletResponse response) throws IOException {
		int execution = this.executions.increment("no-cache-closed");
		response.setContentType(MediaType.TEXT_PLAIN_VALUE);
		response.getOutputStream().write(("closed, execution " + execution).getBytes(StandardCharsets.UTF_8));
		response.getOutputStream().close();
	}

	@PostMapping(path = "/callable-bytes", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
	@Idempotent
	Callable<byte[]> callableBytes(@RequestParam int size) {
		return () -> {
			int execution = this.executions.increment("callable-bytes");
			byte[] bytes = new byte[size];
			new Random(execution).nextBytes(bytes);
			return bytes;
		};
	}

	/** A stream that declares its length: its last byte completes the response. */
	@PostMapping("/sized-stream")
	@Idempotent
	ResponseEntity<StreamingResponseBody> sizedStream() {
		byte[] body = ("stream of execution " + this.executions.increment("sized-stream"))
			.getBytes(StandardCharsets.UTF_8);
		return ResponseEntity.ok().contentLength(body.length).body((out) -> out.write(body));
	}

	/** A stream that closes its output itself, which ends a chunked response. */
	@PostMapping("/closed-stream")
	@Idempotent
	StreamingResponseBody closedStream() {
		int execution = this.executions.increment("closed-stream");
		return (out) -> {
			out.write(("stream of execution " + execution).getBytes(StandardCharsets.UTF_8));
			out.close();
		};
	}

	@PostMapping("/required")
	@Idempotent(required = true)
	Map<String, Object> required() {
		return Map.of("execution", this.executions.increment("required"));
	}

	@PostMapping("/short-ttl")
	@Idempotent(ttl = "${test.short-ttl:2s}")
	Map<String, Object> shortTtl() {
		return Map.of("execution", this.executions.increment("short-ttl"));
	}

	@PostMapping("/slow")
	@Idempotent
	Map<String, Object> slow() {
		this.executions.block();
		return Map.of("execution", this.executions.increment("slow"));
	}

	public record Receipt(String key, int execution, String nonce, String padding) {
	}

	/**
	 * Counts its executions per idempotency key, and answers a body unique to the
	 * execution (a random nonce, {@code size} bytes of padding), so that a replay is
	 * recognisably one execution's response.
	 */
	@PostMapping("/per-key")
	@Idempotent
	Receipt perKey(@RequestHeader("Idempotency-Key") String key, @RequestParam(defaultValue = "0") int size) {
		return receipt("per-key", key, size);
	}

	/**
	 * As {@link #perKey}, but counts the execution first and then waits in
	 * {@link Executions#holdHandlers() held} handlers until released.
	 */
	@PostMapping("/held")
	@Idempotent
	Receipt held(@RequestHeader("Idempotency-Key") String key, @RequestParam(defaultValue = "0") int size) {
		Receipt receipt = receipt("held", key, size);
		this.executions.block();
		return receipt;
	}

	private Receipt receipt(String endpoint, String key, int size) {
		int execution = this.executions.increment(endpoint + ":" + key);
		return new Receipt(key, execution, UUID.randomUUID().toString(), "x".repeat(size));
	}

	@PostMapping("/redirect")
	@Idempotent
	void redirect(HttpServletResponse response) throws IOException {
		int execution = this.executions.increment("redirect");
		response.sendRedirect("/t/orders/r" + execution);
	}

	@PostMapping(path = "/form", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE)
	@Idempotent
	Map<String, Object> form(@RequestParam String amount) {
		return Map.of("execution", this.executions.increment("form"), "amount", amount);
	}

	@PostMapping("/unannotated")
	Map<String, Object> unannotated() {
		return Map.of("execution", this.executions.increment("unannotated"));
	}

	@ExceptionHandler
	ResponseEntity<ProblemDetail> outOfStock(OutOfStockException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
		problem.setTitle("Out of stock");
		return ResponseEntity.status(HttpStatus.CONFLICT).body(problem);
	}

	static class OutOfStockException extends RuntimeException {

		OutOfStockException(String message) {
			super(message);
		}

	}

}
