package dev.idempo.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.idempo.client.IdempotencyClientListener.AttemptOutcome;
import dev.idempo.client.ScriptedRequestFactory.Answer;
import dev.idempo.client.ScriptedRequestFactory.Sent;
import dev.idempo.core.CurrentIdempotentCall;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The interceptor in a real {@link RestClient} chain, in front of a request factory that
 * answers from a script: keys, what is retried and how often, what reaches the caller,
 * and that every discarded answer is closed before the next attempt.
 *
 * @author idempo
 */
class IdempotencyClientInterceptorTests {

	private static final String URL = "http://downstream.test/payments";

	/** Waits short enough that tests retrying without Retry-After are quick. */
	private static final IdempotencyClientSettings FAST = IdempotencyClientSettings.defaults()
		.withBackoff(Duration.ofMillis(1), Duration.ofMillis(4), 2.0, 0.0);

	private final ScriptedRequestFactory server = new ScriptedRequestFactory();

	private final RecordingListener listener = new RecordingListener();

	/** An interceptor after idempo's, counting how often it runs. */
	private final AtomicInteger laterInterceptorRuns = new AtomicInteger();

	@Test
	void postWithoutKeyGetsOneRandomKeyThatEveryRetrySendsWithTheSameBody() {
		this.server.answer(503).fail(new SocketException("Connection reset")).answer(201);
		Result result = post(client(FAST), "{\"amount\":10}");
		assertThat(result.status()).isEqualTo(201);
		List<Sent> sent = this.server.sent();
		assertThat(sent).hasSize(3);
		String key = sent.get(0).key();
		// a Structured Fields string: 128 random bits, base64url
		assertThat(key).matches("\"[A-Za-z0-9_-]{22}\"");
		assertThat(sent).allSatisfy((attempt) -> {
			assertThat(attempt.key()).isEqualTo(key);
			assertThat(new String(attempt.body(), StandardCharsets.UTF_8)).isEqualTo("{\"amount\":10}");
		});
		assertThat(this.laterInterceptorRuns).as("interceptors after idempo's run on every attempt").hasValue(3);
		this.server.answer(201);
		post(client(FAST), "{\"amount\":10}");
		assertThat(this.server.sent().get(3).key()).as("a new call, a new key").isNotEqualTo(key);
	}

	@Test
	void callersOwnKeyIsKeptUnderEitherHeader() {
		this.server.answer(503).answer(200).answer(200);
		RestClient client = client(FAST);
		client.post().uri(URL).header("Idempotency-Key", "\"mine\"").body("x").retrieve().toBodilessEntity();
		client.post().uri(URL).header("X-Idempotency-Key", "alias").body("x").retrieve().toBodilessEntity();
		List<Sent> sent = this.server.sent();
		assertThat(sent).extracting(Sent::key).containsExactly("\"mine\"", "\"mine\"", null);
		assertThat(sent.get(2).headers().getFirst("X-Idempotency-Key")).isEqualTo("alias");
	}

	@ParameterizedTest
	@ValueSource(ints = { 408, 409, 425, 429, 502, 503, 504 })
	void retriesTheListedStatusesUpToMaxAttemptsAndHandsTheLastAnswerOverUnchanged(int status) {
		this.server.answer(status).answer(status).answer(status);
		Result result = post(client(FAST), "x");
		assertThat(result.status()).isEqualTo(status);
		assertThat(result.body()).as("the third answer, as the server sent it").isEqualTo("answer 3");
		List<Answer> answers = this.server.answers();
		assertThat(answers).hasSize(3);
		assertThat(this.server.sent()).allSatisfy((sent) -> assertThat(sent.earlierAnswersClosed())
			.as("each discarded answer is closed before the next attempt")
			.isTrue());
		assertThat(answers.get(0).closes()).isEqualTo(1);
		assertThat(answers.get(1).closes()).isEqualTo(1);
		assertThat(this.listener.retries).containsExactly("POST " + RetryReason.of(status).tag(),
				"POST " + RetryReason.of(status).tag());
	}

	@ParameterizedTest
	@ValueSource(ints = { 200, 201, 204, 301, 400, 401, 404, 412, 422, 500, 501 })
	void everyOtherAnswerReachesTheCallerAtOnce(int status) {
		this.server.answer(status);
		Result result = post(client(FAST), "x");
		assertThat(result.status()).isEqualTo(status);
		assertThat(result.body()).isEqualTo("answer 1");
		assertThat(this.server.sent()).hasSize(1);
		assertThat(this.listener.retries).isEmpty();
	}

	@Test
	void retriesRefusedResetAndTimedOutAttempts() {
		this.server.fail(new ConnectException("Connection refused"))
			.fail(new SocketTimeoutException("Read timed out"))
			.answer(200);
		assertThat(post(client(FAST.withMaxAttempts(4)), "x").status()).isEqualTo(200);
		this.server.fail(new HttpTimeoutException("request timed out"))
			.fail(new IOException("HTTP/1.1 header parser received no bytes"))
			.answer(200);
		assertThat(post(client(FAST.withMaxAttempts(4)), "x").status()).isEqualTo(200);
		assertThat(this.listener.retries).containsExactly("POST refused", "POST timeout", "POST timeout", "POST reset");
		assertThat(this.listener.attempts).containsExactly("POST io-error", "POST io-error", "POST 2xx",
				"POST io-error", "POST io-error", "POST 2xx");
	}

	@Test
	void theLastAttemptsExceptionReachesTheCallerUnchanged() {
		SocketException last = new SocketException("Connection reset");
		this.server.fail(new ConnectException("refused")).answer(503).fail(last);
		assertThatThrownBy(() -> post(client(FAST), "x")).cause().isSameAs(last);
		assertThat(this.server.sent()).hasSize(3);
		assertThat(this.server.answers().get(0).closes()).isEqualTo(1);
	}

	@Test
	void failuresThatAnotherAttemptCannotCureAreNotRetried() {
		UnknownHostException unknown = new UnknownHostException("downstream.test");
		this.server.fail(unknown);
		assertThatThrownBy(() -> post(client(FAST), "x")).cause().isSameAs(unknown);
		SSLHandshakeException handshake = new SSLHandshakeException("bad certificate");
		this.server.fail(handshake);
		assertThatThrownBy(() -> post(client(FAST), "x")).cause().isSameAs(handshake);
		assertThat(this.server.sent()).hasSize(2);
	}

	@Test
	void postWithoutKeyIsNotRetriedWhenPostIsNotAKeyedMethod() {
		IdempotencyClientSettings patchOnly = new IdempotencyClientSettings(Set.of(HttpMethod.PATCH), "Idempotency-Key",
				3, Duration.ofMillis(1), Duration.ofMillis(1), 1.0, 0.0, Duration.ofSeconds(1), true);
		this.server.answer(503);
		assertThat(post(client(patchOnly), "x").status()).isEqualTo(503);
		assertThat(this.server.sent()).singleElement().satisfies((sent) -> assertThat(sent.key()).isNull());
	}

	@Test
	void getGetsNoKeyAndIsRetriedAsHttpMakesItSafe() {
		this.server.answer(502).answer(200);
		Integer status = client(FAST).get()
			.uri(URL)
			.exchange((request, response) -> response.getStatusCode().value(), true);
		assertThat(status).isEqualTo(200);
		assertThat(this.server.sent()).hasSize(2).allSatisfy((sent) -> assertThat(sent.key()).isNull());
	}

	@Test
	void aStreamedBodyMarkedForOneAttemptIsNotRetried() {
		this.server.answer(503);
		Integer status = client(FAST).post()
			.uri(URL)
			.attribute(IdempotencyClientInterceptor.SINGLE_ATTEMPT_ATTRIBUTE, true)
			.body((output) -> output.write("chunk".getBytes(StandardCharsets.UTF_8)))
			.exchange((request, response) -> response.getStatusCode().value(), true);
		assertThat(status).isEqualTo(503);
		assertThat(this.server.sent()).singleElement().satisfies((sent) -> assertThat(sent.key()).isNotNull());
	}

	@Test
	void waitsWhatRetryAfterSaysCutToTheLongestHonoured() {
		IdempotencyClientSettings settings = FAST.withMaxRetryAfter(Duration.ofMillis(300));
		this.server.answer(429, "Retry-After", "0").answer(503, "Retry-After", "3600").answer(200);
		long started = System.nanoTime();
		assertThat(post(client(settings), "x").status()).isEqualTo(200);
		long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
		assertThat(elapsed).as("0 s, then an hour cut to 300 ms").isBetween(300L, 3000L);
	}

	@Test
	void retryAfterDatesAreReadAgainstTheClock() {
		Instant now = Instant.parse("2026-06-01T10:00:00Z");
		String inFiveSeconds = DateTimeFormatter.RFC_1123_DATE_TIME.format(now.plusSeconds(5).atOffset(ZoneOffset.UTC));
		String past = DateTimeFormatter.RFC_1123_DATE_TIME.format(now.minusSeconds(5).atOffset(ZoneOffset.UTC));
		IdempotencyClientSettings settings = FAST.withMaxRetryAfter(Duration.ofMillis(400));
		IdempotencyClientInterceptor interceptor = new IdempotencyClientInterceptor(settings, this.listener);
		interceptor.setClock(Clock.fixed(now, ZoneOffset.UTC));
		this.server.answer(503, "Retry-After", past).answer(503, "Retry-After", inFiveSeconds).answer(200);
		long started = System.nanoTime();
		assertThat(post(client(interceptor), "x").status()).isEqualTo(200);
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isBetween(400L, 4000L);
	}

	@Test
	void interruptingTheWaitEndsTheCallAndClosesTheAnswer() throws Exception {
		this.server.answer(503, "Retry-After", "30").answer(200);
		IdempotencyClientSettings settings = FAST.withMaxRetryAfter(Duration.ofSeconds(30));
		List<Thread> caller = new CopyOnWriteArrayList<>();
		CompletableFuture<Throwable> failure = CompletableFuture.supplyAsync(() -> {
			caller.add(Thread.currentThread());
			try {
				post(client(settings), "x");
				return null;
			}
			catch (Throwable ex) {
				return ex;
			}
		});
		while (this.listener.retries.isEmpty()) {
			Thread.onSpinWait();
		}
		caller.get(0).interrupt();
		Throwable thrown = failure.get(10, TimeUnit.SECONDS);
		assertThat(causes(thrown)).hasAtLeastOneElementOfType(InterruptedIOException.class);
		assertThat(this.server.sent()).hasSize(1);
		assertThat(this.server.answers().get(0).closes()).isEqualTo(1);
	}

	@Test
	void maxAttemptsOfOneSendsTheKeyAndNeverRetries() {
		this.server.answer(503);
		assertThat(post(client(FAST.withMaxAttempts(1)), "x").status()).isEqualTo(503);
		assertThat(this.server.sent()).singleElement().satisfies((sent) -> assertThat(sent.key()).isNotNull());
	}

	@Test
	void callsWhileAnExecutionIsBoundGetKeysDerivedFromItInOrder() {
		RestClient client = client(FAST);
		for (int run = 0; run < 2; run++) {
			try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind("execution-identity")) {
				this.server.answer(200).answer(200).answer(200).answer(200);
				post(client, "first");
				client.get().uri(URL).retrieve().toBodilessEntity();
				client.post().uri(URL).header("Idempotency-Key", "own").body("own").retrieve().toBodilessEntity();
				post(client, "second");
			}
		}
		try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind("another-execution")) {
			this.server.answer(200);
			post(client, "first");
		}
		List<String> keys = this.server.sent().stream().map(Sent::key).toList();
		String first = "\"" + KeyedCallPolicy.derivedKey("execution-identity", "POST", URL, 0) + "\"";
		String second = "\"" + KeyedCallPolicy.derivedKey("execution-identity", "POST", URL, 1) + "\"";
		// neither the GET nor the call with its own key takes a place in the order
		assertThat(keys).containsExactly(first, null, "own", second, first, null, "own", second,
				"\"" + KeyedCallPolicy.derivedKey("another-execution", "POST", URL, 0) + "\"");
		assertThat(first).isNotEqualTo(second).matches("\"[A-Za-z0-9_-]{43}\"");
	}

	@Test
	void withoutDerivedKeysCallsDuringAnExecutionGetRandomKeys() {
		RestClient client = client(FAST.withDerivedKeys(false));
		this.server.answer(200).answer(200);
		for (int run = 0; run < 2; run++) {
			try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind("execution-identity")) {
				post(client, "first");
			}
		}
		List<Sent> sent = this.server.sent();
		assertThat(sent.get(0).key()).isNotEqualTo(sent.get(1).key()).matches("\"[A-Za-z0-9_-]{22}\"");
	}

	@Test
	void derivedKeysDependOnEveryPartOfTheCall() {
		String key = KeyedCallPolicy.derivedKey("id", "POST", URL, 0);
		assertThat(KeyedCallPolicy.derivedKey("id", "POST", URL, 0)).isEqualTo(key);
		assertThat(List.of(KeyedCallPolicy.derivedKey("id2", "POST", URL, 0),
				KeyedCallPolicy.derivedKey("id", "PATCH", URL, 0),
				KeyedCallPolicy.derivedKey("id", "POST", URL + "?x=1", 0),
				KeyedCallPolicy.derivedKey("id", "POST", URL, 1)))
			.doesNotContain(key)
			.doesNotHaveDuplicates();
	}

	@Test
	void aFailingListenerNeverBreaksTheCall() {
		IdempotencyClientListener failing = new IdempotencyClientListener() {

			@Override
			public void onAttempt(String method, AttemptOutcome outcome) {
				throw new IllegalStateException("meter registry down");
			}

			@Override
			public void onRetry(String method, RetryReason reason) {
				throw new IllegalStateException("meter registry down");
			}

		};
		this.server.answer(503).answer(200);
		assertThat(post(client(new IdempotencyClientInterceptor(FAST, failing)), "x").status()).isEqualTo(200);
	}

	@Test
	void everyAttemptStartsFromTheCallersHeadersWhateverInterceptorsBehindItAdded() {
		this.server.answer(503).answer(503).answer(200).answer(200);
		AtomicInteger attempt = new AtomicInteger();
		ClientHttpRequestInterceptor signing = (request, body, execution) -> {
			request.getHeaders().add("Signature", "attempt-" + attempt.incrementAndGet());
			return execution.execute(request, body);
		};
		RestClient client = RestClient.builder()
			.requestFactory(this.server)
			.requestInterceptor(new IdempotencyClientInterceptor(FAST, this.listener))
			.requestInterceptor(signing)
			.build();
		assertThat(post(client, "x").status()).isEqualTo(200);
		client.get().uri(URL).header("Accept", "text/plain").retrieve().toBodilessEntity();
		assertThat(this.server.sent()).extracting((sent) -> sent.headers().get("Signature"))
			.as("each attempt signed once, not once per attempt so far")
			.containsExactly(List.of("attempt-1"), List.of("attempt-2"), List.of("attempt-3"), List.of("attempt-4"));
		assertThat(this.server.sent().get(3).headers().get("Accept")).containsExactly("text/plain");
	}

	@Test
	void aSecondIdempoInterceptorOnTheSameClientNeitherMultipliesAttemptsNorChangesTheKey() {
		this.server.answer(503).answer(503).answer(503);
		IdempotencyClientInterceptor interceptor = new IdempotencyClientInterceptor(FAST, this.listener);
		RestClient client = RestClient.builder()
			.requestFactory(this.server)
			.requestInterceptor(interceptor)
			.requestInterceptor(new IdempotencyClientInterceptor(FAST, IdempotencyClientListener.NONE))
			.requestInterceptor(interceptor)
			.build();
		assertThat(post(client, "x").status()).isEqualTo(503);
		assertThat(this.server.sent()).as("max-attempts in all, not max-attempts cubed").hasSize(3);
		assertThat(this.server.sent()).extracting(Sent::key)
			.doesNotContainNull()
			.containsOnly(this.server.sent().get(0).key());
		assertThat(this.listener.retries).hasSize(2);
		this.server.answer(201);
		assertThat(post(client, "x").status()).as("the marker does not outlive its call").isEqualTo(201);
		assertThat(this.server.sent().get(3).key()).isNotEqualTo(this.server.sent().get(0).key());
	}

	@Test
	void anInterruptDuringAnAttemptEndsTheRetriesAndHandsItsAnswerOver() {
		this.server.answer(503).answer(200);
		ClientHttpRequestInterceptor interrupting = (request, body, execution) -> {
			ClientHttpResponse response = execution.execute(request, body);
			// a blocking client that does not notice interrupts answers all the same
			Thread.currentThread().interrupt();
			return response;
		};
		RestClient client = RestClient.builder()
			.requestFactory(this.server)
			.requestInterceptor(new IdempotencyClientInterceptor(FAST, this.listener))
			.requestInterceptor(interrupting)
			.build();
		try {
			assertThat(post(client, "x")).isEqualTo(new Result(503, "answer 1"));
			assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept").isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(this.server.sent()).hasSize(1);
		assertThat(this.listener.retries).isEmpty();
	}

	@Test
	void anAnswerWhoseStatusCannotBeReadIsClosed() {
		this.server.answer(200);
		IOException unreadable = new IOException("Unexpected end of file from server");
		AtomicInteger closes = new AtomicInteger();
		ClientHttpRequestInterceptor broken = (request, body, execution) -> {
			ClientHttpResponse response = execution.execute(request, body);
			return new ClientHttpResponse() {

				@Override
				public HttpStatusCode getStatusCode() throws IOException {
					throw unreadable;
				}

				@Override
				public String getStatusText() throws IOException {
					throw unreadable;
				}

				@Override
				public HttpHeaders getHeaders() {
					return response.getHeaders();
				}

				@Override
				public InputStream getBody() throws IOException {
					return response.getBody();
				}

				@Override
				public void close() {
					closes.incrementAndGet();
					response.close();
				}

			};
		};
		RestClient client = RestClient.builder()
			.requestFactory(this.server)
			.requestInterceptor(new IdempotencyClientInterceptor(FAST.withMaxAttempts(1), this.listener))
			.requestInterceptor(broken)
			.build();
		assertThatThrownBy(() -> post(client, "x")).cause().isSameAs(unreadable);
		assertThat(closes).as("the answer the caller never gets is closed").hasValue(1);
		assertThat(this.server.answers().get(0).closes()).isEqualTo(1);
	}

	@Test
	void anAnswerWhoseRetryAfterCannotBeReadIsClosed() {
		this.server.answer(503);
		IllegalStateException unreadable = new IllegalStateException("headers gone");
		ClientHttpRequestInterceptor broken = (request, body, execution) -> {
			ClientHttpResponse response = execution.execute(request, body);
			return new ClientHttpResponse() {

				@Override
				public HttpStatusCode getStatusCode() throws IOException {
					return response.getStatusCode();
				}

				@Override
				public String getStatusText() throws IOException {
					return response.getStatusText();
				}

				@Override
				public HttpHeaders getHeaders() {
					throw unreadable;
				}

				@Override
				public InputStream getBody() throws IOException {
					return response.getBody();
				}

				@Override
				public void close() {
					response.close();
				}

			};
		};
		RestClient client = RestClient.builder()
			.requestFactory(this.server)
			.requestInterceptor(new IdempotencyClientInterceptor(FAST, this.listener))
			.requestInterceptor(broken)
			.build();
		assertThatThrownBy(() -> post(client, "x")).isSameAs(unreadable);
		assertThat(this.server.answers().get(0).closes()).isEqualTo(1);
	}

	@Test
	void tlsFailuresAreNotRetriedButAConnectionResetUnderTlsIs() {
		SSLException plaintext = new SSLException("Unsupported or unrecognized SSL message");
		this.server.fail(plaintext);
		assertThatThrownBy(() -> post(client(FAST), "x")).cause().isSameAs(plaintext);
		assertThat(this.server.sent()).hasSize(1);
		this.server.fail(new SSLException("Connection reset", new SocketException("Connection reset"))).answer(200);
		assertThat(post(client(FAST), "x").status()).isEqualTo(200);
		assertThat(this.listener.retries).containsExactly("POST reset");
		IOException first = new IOException("first");
		IOException second = new IOException("second", first);
		first.initCause(second);
		assertThat(RetryReason.of(first)).as("a cause chain that is a cycle ends")
			.isEqualTo(RetryReason.CONNECTION_RESET);
	}

	private RestClient client(IdempotencyClientSettings settings) {
		return client(new IdempotencyClientInterceptor(settings, this.listener));
	}

	private RestClient client(IdempotencyClientInterceptor interceptor) {
		ClientHttpRequestInterceptor counting = (request, body, execution) -> {
			this.laterInterceptorRuns.incrementAndGet();
			return execution.execute(request, body);
		};
		return RestClient.builder()
			.requestFactory(this.server)
			.requestInterceptor(interceptor)
			.requestInterceptor(counting)
			.build();
	}

	private Result post(RestClient client, String body) {
		return client.post()
			.uri(URL)
			.body(body)
			.exchange((request, response) -> new Result(response.getStatusCode().value(),
					new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8)), true);
	}

	private static List<Throwable> causes(Throwable thrown) {
		List<Throwable> causes = new ArrayList<>();
		for (Throwable cause = thrown; cause != null; cause = cause.getCause()) {
			causes.add(cause);
		}
		return causes;
	}

	record Result(int status, String body) {
	}

	static final class RecordingListener implements IdempotencyClientListener {

		final List<String> attempts = new CopyOnWriteArrayList<>();

		final List<String> retries = new CopyOnWriteArrayList<>();

		@Override
		public void onAttempt(String method, AttemptOutcome outcome) {
			this.attempts.add(method + " " + outcome.tag());
		}

		@Override
		public void onRetry(String method, RetryReason reason) {
			this.retries.add(method + " " + reason.tag());
		}

	}

}
