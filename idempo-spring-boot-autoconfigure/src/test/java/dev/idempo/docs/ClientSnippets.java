package dev.idempo.docs;

import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;
import dev.idempo.client.IdempotencyClientInterceptor;
import dev.idempo.client.IdempotencyClientSettings;
import dev.idempo.client.IdempotencyExchangeFilterFunction;

import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The client snippets of the documentation ("The calling side"), compiled here;
 * {@link ClientSnippetsTests} runs the clients built by hand against a server.
 */
final class ClientSnippets {

	private ClientSnippets() {
	}

	// tag::client-handler[]
	@RestController
	class OrdersController {

		private final RestClient charges;

		// Boot's builder: idempo's interceptor is on it
		OrdersController(RestClient.Builder builder) {
			this.charges = builder.baseUrl("http://payments.internal").build();
		}

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Order> order(@RequestBody OrderRequest order) {
			// keyed, retried, and the key derived from this request
			Charge charge = this.charges.post().uri("/charges").body(order.charge()).retrieve().body(Charge.class);
			return ResponseEntity.status(201).body(new Order(order.id(), charge));
		}

	}
	// end::client-handler[]

	record OrderRequest(String id, ChargeRequest charge) {
	}

	record ChargeRequest(long amount) {
	}

	record Charge(String id) {
	}

	record Order(String id, Charge charge) {
	}

	static RestClient byHand(ClientHttpRequestInterceptor tracing) {
		// tag::client-by-hand[]
		RestClient client = RestClient.builder()
			.requestInterceptor(
					new IdempotencyClientInterceptor(IdempotencyClientSettings.defaults().withMaxAttempts(5)))
			// added after idempo's interceptor: runs on every attempt
			.requestInterceptor(tracing)
			.build();
		// end::client-by-hand[]
		return client;
	}

	static WebClient webClientByHand(ExchangeFilterFunction tracing) {
		// tag::webclient-by-hand[]
		WebClient client = WebClient.builder()
			.filter(new IdempotencyExchangeFilterFunction(IdempotencyClientSettings.defaults().withMaxAttempts(5)))
			// added after idempo's filter: runs on every attempt
			.filter(tracing)
			.build();
		// end::webclient-by-hand[]
		return client;
	}

	static Mono<Charge> chargeInExecution(WebClient charges, ChargeRequest request, String identity) {
		// tag::webclient-context[]
		Mono<Charge> charge = charges.post()
			.uri("/charges")
			.bodyValue(request)
			.retrieve()
			.bodyToMono(Charge.class)
			// the calls of this pipeline derive their keys from the execution's identity
			.contextWrite(IdempotencyExchangeFilterFunction.withCall(identity));
		// end::webclient-context[]
		return charge;
	}

}
