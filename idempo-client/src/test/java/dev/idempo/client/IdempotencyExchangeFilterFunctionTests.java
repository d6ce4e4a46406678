package dev.idempo.client;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;

import dev.idempo.client.IdempotencyClientInterceptorTests.RecordingListener;
import dev.idempo.client.ScriptedHttpServer.Sent;
import dev.idempo.core.CurrentIdempotentCall;

import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The filter in a real {@link WebClient} on Reactor Netty, against a real HTTP server
 * answering from a script, with BlockHound installed ({@link BlockHoundExtension}): keys,
 * what is retried and how often, the waits, what reaches the subscriber, derived keys
 * from the Reactor context or the thread, and that all of it is decided as the
 * {@code RestClient} interceptor decides it (the same keys and the same meters for the
 * same calls).
 *
 * @author idempo
 */
class IdempotencyExchangeFilterFunctionTests {

	/** Waits short enough that tests retrying without Retry-After are quick. */
	private static final IdempotencyClientSettings FAST = IdempotencyClientSettings.defaults()
		.withBackoff(Duration.ofMillis(1), Duration.ofMillis(4), 2.0, 0.0);

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private final ScriptedHttpServer server = new ScriptedHttpServer();

	private final String url = this.server.url("/payments");

	private final RecordingListener listener = new RecordingListener();

	/** A filter after idempo's, counting how often it runs. */
	private final AtomicInteger laterFilterRuns = new AtomicInteger();

	@AfterEach
	void stopServer() {
		this.server.close();
	}

	@Test
	void postWithoutKeyGetsOneRandomKeyThatEveryRetrySendsWithTheSameBody() {
		this.server.answer(503, "Retry-After", "0").drop().answer(201);
		assertThat(post(client(FAST), "{\"amount\":10}")).isEqualTo(new Result(201, "answer 3"));
		List<Sent> sent = this.server.sent();
		assertThat(sent).hasSize(3);
		String key = sent.get(0).key();
		// a Structured Fields string: 128 random bits, base64url
		assertThat(key).matches("\"[A-Za-z0-9_-]{22}\"");
		assertThat(sent).allSatisfy((attempt) -> {
			assertThat(attempt.key()).isEqualTo(key);
			assertThat(attempt.body()).isEqualTo("{\"amount\":10}");
		});
		assertThat(this.laterFilterRuns).as("filters after idempo's run on every attempt").hasValue(3);
		assertThat(this.listener.attempts).containsExactly("POST 5xx", "POST io-error", "POST 2xx");
		assertThat(this.listener.retries).containsExactly("POST 503", "POST reset");
		post(client(FAST), "{\"amount\":10}");
		assertThat(this.server.sent().get(3).key()).as("a new call, a new key").isNotEqualTo(key);
	}

	@Test
	void callersOwnKeyIsKeptUnderEitherHeader() {
		this.server.answer(503).answer(200).answer(200);
		WebClient client = client(FAST);
		exchange(client.post().uri(this.url).header("Idempotency-Key", "\"mine\"").bodyValue("x"));
		exchange(client.post().uri(this.url).header("X-Idempotency-Key", "alias").bodyValue("x"));
		List<Sent> sent = this.server.sent();
		assertThat(sent).extracting(Sent::key).containsExactly("\"mine\"", "\"mine\"", null);
		assertThat(sent.get(2).header("X-Idempotency-Key")).isEqualTo("alias");
	}

	@ParameterizedTest
	@ValueSource(ints = { 408, 409, 425, 429, 502, 503, 504 })
	void retriesTheListedStatusesUpToMaxAttemptsAndHandsTheLastAnswerOverUnchanged(int status) {
		this.server.answer(status).answer(status).answer(status).answer(201);
		assertThat(post(client(FAST), "x")).as("the third answer, as the server sent it")
			.isEqualTo(new Result(status, "answer 3"));
		assertThat(this.server.sent()).hasSize(3).extracting(Sent::key).containsOnly(this.server.sent().get(0).key());
		String reason = "POST " + RetryReason.of(status).tag();
		assertThat(this.listener.retries).containsExactly(reason, reason);
	}

	@ParameterizedTest
	@ValueSource(ints = { 200, 201, 301, 400, 401, 404, 412, 422, 500, 501 })
	void everyOtherAnswerReachesTheCallerAtOnce(int status) {
		this.server.answer(status).answer(201);
		assertThat(post(client(FAST), "x")).isEqualTo(new Result(status, "answer 1"));
		assertThat(this.server.sent()).hasSize(1);
		assertThat(this.listener.retries).isEmpty();
	}

	@Test
	void waitsWhatRetryAfterSaysCutToTheLongestHonoured() {
		IdempotencyClientSettings settings = FAST.withMaxRetryAfter(Duration.ofMillis(1200));
		this.server.answer(429, "Retry-After", "1").answer(503, "Retry-After", "3600").answer(200);
		assertThat(post(client(settings), "x").status()).isEqualTo(200);
		List<Sent> sent = this.server.sent();
		assertThat(sent).hasSize(3);
		assertThat(millisBetween(sent.get(0), sent.get(1))).as("Retry-After: 1, not the backoff of 1 ms")
			.isBetween(950L, 1190L + 2000L);
		assertThat(millisBetween(sent.get(1), sent.get(2))).as("an hour cut to 1.2 s").isBetween(1150L, 3000L);
	}

	@Test
	void retryAfterDatesAreReadAgainstTheClock() {
		Instant now = Instant.parse("2026-06-01T10:00:00Z");
		String inFiveSeconds = DateTimeFormatter.RFC_1123_DATE_TIME.format(now.plusSeconds(5).atOffset(ZoneOffset.UTC));
		String past = DateTimeFormatter.RFC_1123_DATE_TIME.format(now.minusSeconds(5).atOffset(ZoneOffset.UTC));
		IdempotencyExchangeFilterFunction filter = new IdempotencyExchangeFilterFunction(
				FAST.withMaxRetryAfter(Duration.ofMillis(400)), this.listener);
		filter.setClock(Clock.fixed(now, ZoneOffset.UTC));
		this.server.answer(503, "Retry-After", past).answer(503, "Retry-After", inFiveSeconds).answer(200);
		assertThat(post(client(filter), "x").status()).isEqualTo(200);
		List<Sent> sent = this.server.sent();
		assertThat(millisBetween(sent.get(1), sent.get(2))).as("5 s cut to 400 ms").isBetween(380L, 4000L);
	}

	@Test
	void getGetsNoKeyAndIsRetriedAsHttpMakesItSafe() {
		this.server.answer(502).answer(200);
		Result result = exchange(client(FAST).get().uri(this.url));
		assertThat(result).isEqualTo(new Result(200, "answer 2"));
		assertThat(this.server.sent()).hasSize(2).allSatisfy((sent) -> {
			assertThat(sent.method()).isEqualTo("GET");
			assertThat(sent.key()).isNull();
		});
	}

	@Test
	void postWithoutKeyIsNeitherKeyedNorRetriedWhenPostIsNotAKeyedMethod() {
		IdempotencyClientSettings patchOnly = new IdempotencyClientSettings(Set.of(HttpMethod.PATCH), "Idempotency-Key",
				3, Duration.ofMillis(1), Duration.ofMillis(1), 1.0, 0.0, Duration.ofSeconds(1), true);
		this.server.answer(503).answer(200);
		assertThat(post(client(patchOnly), "x").status()).isEqualTo(503);
		assertThat(this.server.sent()).singleElement().satisfies((sent) -> assertThat(sent.key()).isNull());
	}

	@Test
	void aBodyMarkedForOneAttemptGetsItsKeyAndOneAttempt() {
		this.server.answer(503).answer(200);
		Result result = exchange(client(FAST).post()
			.uri(this.url)
			.attribute(IdempotencyExchangeFilterFunction.SINGLE_ATTEMPT_ATTRIBUTE, true)
			.bodyValue("once"));
		assertThat(result.status()).isEqualTo(503);
		assertThat(this.server.sent()).singleElement().satisfies((sent) -> assertThat(sent.key()).isNotNull());
	}

	@Test
	void maxAttemptsOfOneSendsTheKeyAndNeverRetries() {
		this.server.answer(503).answer(200);
		assertThat(post(client(FAST.withMaxAttempts(1)), "x").status()).isEqualTo(503);
		assertThat(this.server.sent()).singleElement().satisfies((sent) -> assertThat(sent.key()).isNotNull());
	}

	@Test
	void refusedConnectionsAreRetriedAndTheLastFailureReachesTheCallerUnchanged() throws IOException {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
			closedPort = socket.getLocalPort();
		}
		List<Throwable> failures = new CopyOnWriteArrayList<>();
		ExchangeFilterFunction recording = (request, next) -> next.exchange(request).doOnError(failures::add);
		WebClient client = WebClient.builder()
			.filter(new IdempotencyExchangeFilterFunction(FAST, this.listener))
			.filter(recording)
			.build();
		assertThatThrownBy(() -> post(client, "http://127.0.0.1:" + closedPort + "/payments", "x").block(TIMEOUT))
			.isInstanceOf(WebClientRequestException.class)
			.hasRootCauseInstanceOf(ConnectException.class)
			.satisfies((thrown) -> assertThat(thrown).isSameAs(failures.get(failures.size() - 1)));
		assertThat(failures).hasSize(3);
		assertThat(this.listener.attempts).containsExactly("POST io-error", "POST io-error", "POST io-error");
		assertThat(this.listener.retries).containsExactly("POST refused", "POST refused");
	}

	@Test
	void aTimedOutAttemptIsRetriedWithTheSameKey() {
		this.server.hold().answer(201);
		HttpClient http = HttpClient.create().responseTimeout(Duration.ofMillis(300));
		WebClient client = WebClient.builder()
			.clientConnector(new ReactorClientHttpConnector(http))
			.filter(new IdempotencyExchangeFilterFunction(FAST, this.listener))
			.build();
		assertThat(post(client, "x")).isEqualTo(new Result(201, "answer 2"));
		this.server.releaseHeld();
		assertThat(this.listener.attempts).containsExactly("POST io-error", "POST 2xx");
		assertThat(this.listener.retries).containsExactly("POST timeout");
		assertThat(this.server.sent()).hasSize(2).extracting(Sent::key).containsOnly(this.server.sent().get(0).key());
	}

	@Test
	void aFailureThatIsNoIoFailureReachesTheCallerAtOnce() {
		IllegalStateException broken = new IllegalStateException("signing key unavailable");
		WebClient client = WebClient.builder()
			.filter(new IdempotencyExchangeFilterFunction(FAST, this.listener))
			.filter((request, next) -> {
				this.laterFilterRuns.incrementAndGet();
				return Mono.error(broken);
			})
			.build();
		assertThatThrownBy(() -> post(client, "x")).isSameAs(broken);
		assertThat(this.laterFilterRuns).hasValue(1);
		assertThat(this.listener.attempts).isEmpty();
	}

	@Test
	void everyAttemptStartsFromTheCallersHeadersWhateverFiltersBehindItAdded() {
		this.server.answer(503).answer(503).answer(200);
		AtomicInteger attempt = new AtomicInteger();
		ExchangeFilterFunction signing = (request, next) -> next
			.exchange(ClientRequest.from(request).header("Signature", "attempt-" + attempt.incrementAndGet()).build());
		WebClient client = WebClient.builder()
			.filter(new IdempotencyExchangeFilterFunction(FAST, this.listener))
			.filter(signing)
			.build();
		assertThat(post(client, "x").status()).isEqualTo(200);
		assertThat(this.server.sent()).extracting((sent) -> sent.values("Signature"))
			.as("each attempt signed once, not once per attempt so far")
			.containsExactly(List.of("attempt-1"), List.of("attempt-2"), List.of("attempt-3"));
	}

	@Test
	void aSecondIdempoFilterOnTheSameClientNeitherMultipliesAttemptsNorChangesTheKey() {
		this.server.answer(503).answer(503).answer(503).answer(201);
		IdempotencyExchangeFilterFunction filter = new IdempotencyExchangeFilterFunction(FAST, this.listener);
		WebClient client = WebClient.builder()
			.filter(filter)
			.filter(new IdempotencyExchangeFilterFunction(FAST))
			.filter(filter)
			.build();
		assertThat(post(client, "x").status()).isEqualTo(503);
		assertThat(this.server.sent()).as("max-attempts in all, not max-attempts cubed").hasSize(3);
		assertThat(this.server.sent()).extracting(Sent::key)
			.doesNotContainNull()
			.containsOnly(this.server.sent().get(0).key());
		assertThat(this.listener.retries).hasSize(2);
		assertThat(post(client, "x").status()).as("the marker does not outlive its call").isEqualTo(201);
		assertThat(this.server.sent().get(3).key()).isNotEqualTo(this.server.sent().get(0).key());
	}

	@Test
	void countsTheSameMetersAsTheInterceptorForTheSameCalls() {
		SimpleMeterRegistry viaFilter = new SimpleMeterRegistry();
		SimpleMeterRegistry viaInterceptor = new SimpleMeterRegistry();
		this.server.answer(503, "Retry-After", "0").drop().answer(201);
		post(client(new IdempotencyExchangeFilterFunction(FAST, new MicrometerIdempotencyClientListener(viaFilter))),
				"x");
		this.server.answer(503, "Retry-After", "0").drop().answer(201);
		RestClient restClient = RestClient.builder()
			.requestInterceptor(
					new IdempotencyClientInterceptor(FAST, new MicrometerIdempotencyClientListener(viaInterceptor)))
			.build();
		assertThat(restClient.post().uri(this.url).body("x").retrieve().toBodilessEntity().getStatusCode().value())
			.isEqualTo(201);
		assertThat(counts(viaFilter)).isEqualTo(counts(viaInterceptor))
			.containsEntry("idempo.client.attempts[tag(method=POST), tag(outcome=5xx)]", 1.0)
			.containsEntry("idempo.client.attempts[tag(method=POST), tag(outcome=io-error)]", 1.0)
			.containsEntry("idempo.client.retries[tag(method=POST), tag(reason=reset)]", 1.0)
			.hasSize(5);
	}

	@Test
	void callsUnderAnExecutionInTheContextGetKeysDerivedFromItInOrderAndEveryRunSendsTheSame() {
		WebClient client = client(FAST);
		Mono<Void> handler = handlerCalls(client).contextWrite(IdempotencyExchangeFilterFunction.withCall("identity"));
		handler.block(TIMEOUT);
		// a re-run, subscribed on a non-blocking thread
		handler.subscribeOn(Schedulers.parallel()).block(TIMEOUT);
		handlerCalls(client).contextWrite(IdempotencyExchangeFilterFunction.withCall("another")).block(TIMEOUT);
		String first = "\"" + KeyedCallPolicy.derivedKey("identity", "POST", this.url, 0) + "\"";
		String second = "\"" + KeyedCallPolicy.derivedKey("identity", "POST", this.url, 1) + "\"";
		// neither the GET nor the call with its own key takes a place in the order
		assertThat(this.server.sent()).extracting(Sent::key)
			.containsExactly(first, null, "own", second, first, null, "own", second,
					"\"" + KeyedCallPolicy.derivedKey("another", "POST", this.url, 0) + "\"", null, "own",
					"\"" + KeyedCallPolicy.derivedKey("another", "POST", this.url, 1) + "\"");
		assertThat(first).isNotEqualTo(second).matches("\"[A-Za-z0-9_-]{43}\"");
	}

	@Test
	void derivedKeysAreTheRestClientInterceptorsForTheSameCalls() {
		RestClient restClient = RestClient.builder().requestInterceptor(new IdempotencyClientInterceptor(FAST)).build();
		try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind("identity")) {
			restClient.post().uri(this.url).body("first").retrieve().toBodilessEntity();
			restClient.get().uri(this.url).retrieve().toBodilessEntity();
			restClient.post().uri(this.url).header("Idempotency-Key", "own").body("own").retrieve().toBodilessEntity();
			restClient.post().uri(this.url + "?page=2").body("second").retrieve().toBodilessEntity();
		}
		WebClient client = client(FAST);
		Mono<Void> sameCalls = post(client, this.url, "first").then(exchangeLater(client.get().uri(this.url)))
			.then(exchangeLater(client.post().uri(this.url).header("Idempotency-Key", "own").bodyValue("own")))
			.then(post(client, this.url + "?page=2", "second"))
			.then();
		sameCalls.contextWrite(IdempotencyExchangeFilterFunction.withCall("identity")).block(TIMEOUT);
		List<String> keys = this.server.sent().stream().map(Sent::key).toList();
		assertThat(keys).hasSize(8);
		assertThat(keys.subList(4, 8)).as("WebClient's keys").isEqualTo(keys.subList(0, 4));
		assertThat(keys.get(0)).isNotNull().isNotEqualTo(keys.get(3));
	}

	@Test
	void theThreadsExecutionIsUsedWhenTheContextHasNoneAndTheContextsWins() {
		WebClient client = client(FAST);
		try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind("thread")) {
			post(client, "first");
			post(client, this.url, "in context").contextWrite(IdempotencyExchangeFilterFunction.withCall("context"))
				.block(TIMEOUT);
			post(client, "second");
		}
		post(client, "unbound");
		List<String> keys = this.server.sent().stream().map(Sent::key).toList();
		assertThat(keys.subList(0, 3)).containsExactly(
				"\"" + KeyedCallPolicy.derivedKey("thread", "POST", this.url, 0) + "\"",
				"\"" + KeyedCallPolicy.derivedKey("context", "POST", this.url, 0) + "\"",
				"\"" + KeyedCallPolicy.derivedKey("thread", "POST", this.url, 1) + "\"");
		assertThat(keys.get(3)).matches("\"[A-Za-z0-9_-]{22}\"");
	}

	@Test
	void anExecutionPutInTheContextAsItIsCountsItsCallsOnAcrossThreads() {
		RestClient restClient = RestClient.builder().requestInterceptor(new IdempotencyClientInterceptor(FAST)).build();
		try (CurrentIdempotentCall.Binding binding = CurrentIdempotentCall.bind("identity")) {
			restClient.post().uri(this.url).body("first").retrieve().toBodilessEntity();
			CurrentIdempotentCall call = CurrentIdempotentCall.current();
			assertThat(call).isNotNull();
			Mono<Result> onAnotherThread = post(client(FAST), this.url, "second").subscribeOn(Schedulers.parallel())
				.contextWrite(IdempotencyExchangeFilterFunction.withCall(call));
			onAnotherThread.block(TIMEOUT);
			assertThat(Mono
				.deferContextual((context) -> Mono.justOrEmpty(IdempotencyExchangeFilterFunction.currentCall(context)))
				.contextWrite(IdempotencyExchangeFilterFunction.withCall(call))
				.subscribeOn(Schedulers.parallel())
				.block(TIMEOUT)).isSameAs(call);
		}
		assertThat(this.server.sent()).extracting(Sent::key)
			.containsExactly("\"" + KeyedCallPolicy.derivedKey("identity", "POST", this.url, 0) + "\"",
					"\"" + KeyedCallPolicy.derivedKey("identity", "POST", this.url, 1) + "\"");
	}

	@Test
	void withoutDerivedKeysCallsUnderAnExecutionGetRandomKeys() {
		WebClient client = client(FAST.withDerivedKeys(false));
		for (int run = 0; run < 2; run++) {
			post(client, this.url, "first").contextWrite(IdempotencyExchangeFilterFunction.withCall("identity"))
				.block(TIMEOUT);
		}
		List<Sent> sent = this.server.sent();
		assertThat(sent.get(0).key()).isNotEqualTo(sent.get(1).key()).matches("\"[A-Za-z0-9_-]{22}\"");
	}

	@Test
	void aCallSubscribedOnANonBlockingThreadIsKeyedAndRetriedWithoutBlocking() {
		this.server.answer(503).answer(429, "Retry-After", "0").answer(201);
		Result result = post(client(FAST), this.url, "x").subscribeOn(Schedulers.parallel()).block(TIMEOUT);
		assertThat(result).isEqualTo(new Result(201, "answer 3"));
		assertThat(this.server.sent()).extracting(Sent::key)
			.doesNotContainNull()
			.containsOnly(this.server.sent().get(0).key());
	}

	@Test
	@Tag(BlockHoundExtension.EXPECTS_BLOCKING)
	void blockHoundFailsABlockingCallOnANonBlockingThread() {
		Mono<Integer> blocking = Mono.fromCallable(() -> {
			// the blocking call BlockHound must report, not a wait for anything
			Thread.sleep(1);
			return 1;
		}).subscribeOn(Schedulers.parallel());
		assertThatThrownBy(() -> blocking.block(TIMEOUT)).hasCauseInstanceOf(BlockingOperationError.class);
	}

	/**
	 * What a handler does: two keyed calls, a GET and a call with its own key between
	 * them.
	 */
	private Mono<Void> handlerCalls(WebClient client) {
		return post(client, this.url, "first").then(exchangeLater(client.get().uri(this.url)))
			.then(exchangeLater(client.post().uri(this.url).header("Idempotency-Key", "own").bodyValue("own")))
			.then(post(client, this.url, "second"))
			.then();
	}

	private WebClient client(IdempotencyClientSettings settings) {
		return client(new IdempotencyExchangeFilterFunction(settings, this.listener));
	}

	private WebClient client(IdempotencyExchangeFilterFunction filter) {
		ExchangeFilterFunction counting = (request, next) -> {
			this.laterFilterRuns.incrementAndGet();
			return next.exchange(request);
		};
		return WebClient.builder().filter(filter).filter(counting).build();
	}

	private Result post(WebClient client, String body) {
		return post(client, this.url, body).block(TIMEOUT);
	}

	private static Mono<Result> post(WebClient client, String url, String body) {
		return exchangeLater(client.post().uri(url).bodyValue(body));
	}

	private static Result exchange(WebClient.RequestHeadersSpec<?> request) {
		return exchangeLater(request).block(TIMEOUT);
	}

	private static Mono<Result> exchangeLater(WebClient.RequestHeadersSpec<?> request) {
		return request.exchangeToMono(IdempotencyExchangeFilterFunctionTests::result);
	}

	private static Mono<Result> result(ClientResponse response) {
		return response.bodyToMono(String.class)
			.defaultIfEmpty("")
			.map((body) -> new Result(response.statusCode().value(), body));
	}

	private static long millisBetween(Sent earlier, Sent later) {
		return TimeUnit.NANOSECONDS.toMillis(later.arrivedNanos() - earlier.arrivedNanos());
	}

	private static Map<String, Double> counts(SimpleMeterRegistry registry) {
		Map<String, Double> counts = new TreeMap<>();
		for (Meter meter : registry.getMeters()) {
			counts.put(meter.getId().getName() + meter.getId().getTags(), ((Counter) meter).count());
		}
		return counts;
	}

	record Result(int status, String body) {
	}

}
