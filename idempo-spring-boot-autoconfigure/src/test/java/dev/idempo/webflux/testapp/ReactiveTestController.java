package dev.idempo.webflux.testapp;

import java.net.URI;
import java.util.Map;
import java.util.UUID;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Annotated WebFlux handlers of every return style the contract covers: {@code Mono} of a
 * {@code ResponseEntity}, {@code Mono} of a body, a streaming {@code Flux}, an error.
 *
 * @author idempo
 */
@RestController
@RequestMapping("/t")
class ReactiveTestController {

	private final ReactiveExecutions executions;

	ReactiveTestController(ReactiveExecutions executions) {
		this.executions = executions;
	}

	record OrderRequest(String item, int quantity) {
	}

	record Order(String id, int execution, String item, int quantity) {
	}

	@PostMapping("/orders")
	@Idempotent
	Mono<ResponseEntity<Order>> createOrder(@RequestBody Mono<OrderRequest> request) {
		return request.map((order) -> {
			int execution = this.executions.increment("orders");
			return ResponseEntity.created(URI.create("/t/orders/ord-" + execution))
				.header("X-Order-Execution", Integer.toString(execution))
				.header(HttpHeaders.SET_COOKIE, ResponseCookie.from("session", "s" + execution).build().toString())
				.body(new Order("ord-" + execution, execution, order.item(), order.quantity()));
		});
	}

	@PostMapping("/object")
	@Idempotent
	Mono<Order> object(@RequestBody(required = false) Mono<String> body) {
		return Mono.fromSupplier(() -> {
			int execution = this.executions.increment("object");
			return new Order("o" + execution, execution, "thing", 1);
		});
	}

	@PostMapping("/slow")
	@Idempotent
	Mono<Map<String, Object>> slow() {
		return this.executions.hold()
			.then(Mono.fromSupplier(() -> Map.of("execution", this.executions.increment("slow"))));
	}

	@PostMapping("/required")
	@Idempotent(required = true)
	Mono<Map<String, Object>> required() {
		return Mono.fromSupplier(() -> Map.of("execution", this.executions.increment("required")));
	}

	@PostMapping("/server-error")
	@Idempotent
	Mono<ResponseEntity<Map<String, Object>>> serverError() {
		return Mono.fromSupplier(() -> ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR)
			.body(Map.of("execution", this.executions.increment("server-error"))));
	}

	@PostMapping("/fails")
	@Idempotent
	Mono<Map<String, Object>> fails() {
		return Mono.defer(() -> Mono.error(new IllegalStateException("failure " + this.executions.increment("fails"))));
	}

	@PostMapping(path = "/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	@Idempotent
	Flux<ServerSentEvent<String>> events() {
		return Flux.defer(() -> {
			int execution = this.executions.increment("events");
			String nonce = UUID.randomUUID().toString();
			return Flux.range(1, 3).map((i) -> ServerSentEvent.builder(execution + "-" + i + "-" + nonce).build());
		});
	}

	/**
	 * Blocks the thread it is called on, an event loop: BlockHound must refuse it.
	 */
	@PostMapping("/blocking")
	Mono<String> blocking() throws InterruptedException {
		Thread.sleep(1);
		return Mono.just("blocked an event loop");
	}

	@PostMapping("/unprotected")
	Mono<Map<String, Object>> unprotected() {
		return Mono.fromSupplier(() -> Map.of("execution", this.executions.increment("unprotected")));
	}

}
