package dev.idempo.docs;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;

import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the documentation's clients built by hand: a 503 is retried with the same key, and
 * the interceptor or filter added after idempo's runs on every attempt.
 */
class ClientSnippetsTests {

	private final List<String> keys = new CopyOnWriteArrayList<>();

	@Test
	void clientBuiltByHandRetriesWithTheSameKeyAndRunsLaterInterceptorsOnEveryAttempt() throws IOException {
		HttpServer server = chargesServer();
		try {
			AtomicInteger traced = new AtomicInteger();
			ClientHttpRequestInterceptor tracing = (request, bytes, execution) -> {
				traced.incrementAndGet();
				return execution.execute(request, bytes);
			};
			RestClient client = ClientSnippets.byHand(tracing);
			ResponseEntity<String> answer = client.post()
				.uri("http://127.0.0.1:" + server.getAddress().getPort() + "/charges")
				.body("{\"amount\":25}")
				.retrieve()
				.toEntity(String.class);
			assertThat(answer.getStatusCode().value()).isEqualTo(201);
			assertThat(this.keys).hasSize(2);
			assertThat(this.keys.get(0)).isNotBlank().isEqualTo(this.keys.get(1));
			assertThat(traced).hasValue(2);
		}
		finally {
			server.stop(0);
		}
	}

	@Test
	void webClientBuiltByHandRetriesWithTheSameKeyAndRunsLaterFiltersOnEveryAttempt() throws IOException {
		HttpServer server = chargesServer();
		try {
			AtomicInteger traced = new AtomicInteger();
			ExchangeFilterFunction tracing = (request, next) -> {
				traced.incrementAndGet();
				return next.exchange(request);
			};
			WebClient client = ClientSnippets.webClientByHand(tracing);
			String answer = client.post()
				.uri("http://127.0.0.1:" + server.getAddress().getPort() + "/charges")
				.bodyValue("{\"amount\":25}")
				.retrieve()
				.bodyToMono(String.class)
				.block(Duration.ofSeconds(20));
			assertThat(answer).isEqualTo("{\"id\":\"ch_1\"}");
			assertThat(this.keys).hasSize(2);
			assertThat(this.keys.get(0)).isNotBlank().isEqualTo(this.keys.get(1));
			assertThat(traced).hasValue(2);
		}
		finally {
			server.stop(0);
		}
	}

	/** Answers its first charge 503 with {@code Retry-After: 0}, every other one 201. */
	private HttpServer chargesServer() throws IOException {
		List<String> keys = this.keys;
		AtomicInteger answers = new AtomicInteger();
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		server.createContext("/charges", (exchange) -> {
			keys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
			exchange.getRequestBody().readAllBytes();
			boolean first = answers.getAndIncrement() == 0;
			byte[] body = (first ? "busy" : "{\"id\":\"ch_1\"}").getBytes(StandardCharsets.UTF_8);
			if (first) {
				exchange.getResponseHeaders().add("Retry-After", "0");
			}
			exchange.sendResponseHeaders(first ? 503 : 201, body.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(body);
			}
		});
		server.start();
		return server;
	}

}
