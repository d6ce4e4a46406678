package dev.idempo.webflux.testapp;

import java.net.URI;
import java.util.Map;

import reactor.core.publisher.Mono;

import dev.idempo.webflux.testapp.ReactiveTestController.Order;
import dev.idempo.webflux.testapp.ReactiveTestController.OrderRequest;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseCookie;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * WebFlux functional endpoints ({@link RouterFunction}) without {@code @Idempotent},
 * unprotected unless {@code idempo.routes} names them: under {@code /r} the endpoints of
 * the request flow contract ({@code /orders} answering 201 with a {@code Location},
 * {@code /slow} held by {@link ReactiveExecutions}, {@code /object}) and
 * {@code /required}, and one with a path variable; under {@code /x} two that the routes
 * tests leave unnamed.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
public class RoutedReactiveEndpoints {

	@Bean
	RouterFunction<ServerResponse> routedReactiveEndpointsRouter(ReactiveExecutions executions) {
		return RouterFunctions.route()
			.POST("/r/orders", (request) -> request.bodyToMono(OrderRequest.class).flatMap((order) -> {
				int execution = executions.increment("orders");
				return ServerResponse.created(URI.create("/r/orders/ord-" + execution))
					.header("X-Order-Execution", Integer.toString(execution))
					.header(HttpHeaders.SET_COOKIE, ResponseCookie.from("session", "s" + execution).build().toString())
					.bodyValue(new Order("ord-" + execution, execution, order.item(), order.quantity()));
			}))
			.POST("/r/object", (request) -> count(executions, "object").flatMap(
					(execution) -> ServerResponse.ok().bodyValue(new Order("o" + execution, execution, "thing", 1))))
			.POST("/r/slow",
					(request) -> executions.hold()
						.then(count(executions, "slow"))
						.flatMap((execution) -> ServerResponse.ok().bodyValue(Map.of("execution", execution))))
			.POST("/r/required",
					(request) -> count(executions, "r-required")
						.flatMap((execution) -> ServerResponse.ok().bodyValue(Map.of("execution", execution))))
			.POST("/r/accounts/{id}/deposits",
					(request) -> count(executions, "deposits").flatMap((execution) -> ServerResponse.ok()
						.bodyValue(Map.of("account", request.pathVariable("id"), "execution", execution))))
			.POST("/x/accounts/{id}",
					(request) -> count(executions, "x-accounts").flatMap((execution) -> ServerResponse.ok()
						.bodyValue(Map.of("account", request.pathVariable("id"), "execution", execution))))
			.POST("/x/things",
					(request) -> count(executions, "x-things")
						.flatMap((execution) -> ServerResponse.ok().bodyValue(Map.of("execution", execution))))
			.build();
	}

	private static Mono<Integer> count(ReactiveExecutions executions, String endpoint) {
		return Mono.fromSupplier(() -> executions.increment(endpoint));
	}

}
