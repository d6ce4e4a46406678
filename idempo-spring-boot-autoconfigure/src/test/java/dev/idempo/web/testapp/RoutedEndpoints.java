package dev.idempo.web.testapp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

import jakarta.validation.Valid;

import dev.idempo.web.testapp.TestController.Order;
import dev.idempo.web.testapp.TestController.OrderRequest;
import dev.idempo.web.testapp.TestController.ValidatedOrderRequest;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseCookie;
import org.springframework.http.ResponseEntity;
import org.springframework.validation.BindException;
import org.springframework.web.bind.ServletRequestBindingException;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The endpoints of the HTTP contract suite under {@code /r}, without {@code @Idempotent}:
 * functional endpoints (a {@link RouterFunction}), and, where a functional endpoint has
 * no counterpart ({@code @Valid}), a handler method that carries no annotation.
 * Unprotected unless {@code idempo.routes} names them, as the suite does.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
public class RoutedEndpoints {

	/**
	 * What {@code /r/large-list} binds from the query string: a bean, whose required
	 * field the binder checks (on a record that failed construction it cannot).
	 */
	public static class Items {

		private int items;

		public int getItems() {
			return this.items;
		}

		public void setItems(int items) {
			this.items = items;
		}

	}

	@Bean
	RouterFunction<ServerResponse> routedContractEndpoints(Executions executions) {
		return RouterFunctions.route()
			.POST("/r/orders", (request) -> createOrder(request, executions))
			.POST("/r/object", (request) -> {
				int execution = executions.increment("object");
				return ServerResponse.ok().body(new Order("o" + execution, execution, "thing", 1));
			})
			.POST("/r/slow", (request) -> {
				executions.block();
				return ServerResponse.ok().body(Map.of("execution", executions.increment("slow")));
			})
			.POST("/r/short-ttl",
					(request) -> ServerResponse.ok().body(Map.of("execution", executions.increment("short-ttl"))))
			.POST("/r/large-list", (request) -> largeList(request, executions))
			.POST("/r/problem", (request) -> {
				throw new TestController.OutOfStockException("execution " + executions.increment("problem"));
			})
			.POST("/r/response-status-exception", (request) -> {
				executions.increment("response-status-exception");
				throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no such thing");
			})
			.POST("/r/own-binding-failure", (request) -> {
				int execution = executions.increment("own-binding-failure");
				throw new ServletRequestBindingException("the handler's own check failed in execution " + execution);
			})
			.POST("/r/callable-own-binding-failure", (request) -> ServerResponse.async(failLater(() -> {
				int execution = executions.increment("callable-own-binding-failure");
				return new ServletRequestBindingException("the handler's own check failed in execution " + execution);
			})))
			.POST("/r/callable-status-exception", (request) -> ServerResponse.async(failLater(() -> {
				executions.increment("callable-status-exception");
				return new ResponseStatusException(HttpStatus.NOT_FOUND, "no such thing");
			})))
			.onError(TestController.OutOfStockException.class, (ex, request) -> {
				ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
				problem.setTitle("Out of stock");
				return ServerResponse.status(HttpStatus.CONFLICT).body(problem);
			})
			.build();
	}

	/**
	 * Answers a functional endpoint's failed binding with 400, as Spring MVC answers a
	 * handler method's (it leaves a {@code BindException} of {@code ServerRequest.bind}
	 * unresolved: 500).
	 * @return the resolver, which the {@code DispatcherServlet} finds as a bean
	 */
	@Bean
	HandlerExceptionResolver functionalBindingFailures() {
		return (request, response, handler, ex) -> {
			if (!(handler instanceof HandlerFunction<?>) || !(ex instanceof BindException)) {
				return null;
			}
			try {
				response.sendError(HttpStatus.BAD_REQUEST.value(), ex.getMessage());
			}
			catch (IOException failure) {
				throw new UncheckedIOException(failure);
			}
			return new ModelAndView();
		};
	}

	private static ServerResponse createOrder(ServerRequest request, Executions executions) throws Exception {
		// Spring reads the body: an unreadable one or another media type is a rejection
		// before the handler, as for @RequestBody
		OrderRequest body = request.body(OrderRequest.class);
		int execution = executions.increment("orders");
		Order order = new Order("ord-" + execution, execution, body.item(), body.quantity());
		return ServerResponse.created(URI.create("/r/orders/" + order.id()))
			.header("X-Order-Execution", Integer.toString(execution))
			.header(HttpHeaders.SET_COOKIE, ResponseCookie.from("session", "s" + execution).build().toString())
			.body(order);
	}

	private static ServerResponse largeList(ServerRequest request, Executions executions) throws Exception {
		// a missing or unconvertible parameter fails the binding, before the handler
		Items items = request.bind(Items.class, (binder) -> binder.setRequiredFields("items"));
		executions.increment("large-list");
		return ServerResponse.ok().body(TestController.itemList(items.getItems()));
	}

	private static CompletableFuture<ServerResponse> failLater(Supplier<Exception> failure) {
		return CompletableFuture.supplyAsync(() -> {
			throw new CompletionException(failure.get());
		});
	}

	/**
	 * The suite's {@code @Valid} endpoint as a handler method without
	 * {@code @Idempotent}.
	 */
	@RestController
	static class UnannotatedController {

		private final Executions executions;

		UnannotatedController(Executions executions) {
			this.executions = executions;
		}

		@PostMapping("/r/validated-orders")
		ResponseEntity<Order> createValidatedOrder(@Valid @RequestBody ValidatedOrderRequest request) {
			int execution = this.executions.increment("validated-orders");
			return ResponseEntity.status(HttpStatus.CREATED)
				.body(new Order("ord-" + execution, execution, request.item(), request.quantity()));
		}

	}

}
