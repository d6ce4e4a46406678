package dev.idempo.client;

import java.time.Clock;
import java.time.Duration;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import dev.idempo.client.IdempotencyClientListener.AttemptOutcome;
import dev.idempo.core.CurrentIdempotentCall;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * Sends idempotency keys and retries what a key makes safe to retry, for
 * {@code WebClient}: what {@link IdempotencyClientInterceptor} does for
 * {@code RestClient}, decided by the same rules and told to the same
 * {@link IdempotencyClientListener}, without blocking.
 * <ul>
 * <li>A request whose method is one of {@link IdempotencyClientSettings#keyedMethods()}
 * and that carries no key (in the key header or {@code X-Idempotency-Key}) gets one when
 * the exchange is subscribed: a fresh 128-bit random key, or a key derived from the
 * idempotent execution the call is made in, exactly as the interceptor derives it. That
 * execution is the one in the subscriber's Reactor context under
 * {@link #CURRENT_CALL_CONTEXT_KEY} (see {@link #withCall(String)}), or else the one
 * bound to the subscribing thread ({@link CurrentIdempotentCall#current()}), as for a
 * blocking handler that calls {@code block()}. A caller's own key is kept.</li>
 * <li>A request that carries a key, or whose method is idempotent in HTTP, is retried up
 * to {@link IdempotencyClientSettings#maxAttempts()} attempts in all after an I/O failure
 * (refused, reset, closed early, timed out) or a 408, 409, 425, 429, 502, 503 or 504
 * answer, with the same key. It waits what {@code Retry-After} says, cut to
 * {@link IdempotencyClientSettings#maxRetryAfter()}, or else an exponential backoff with
 * jitter, on a timer ({@link Mono#delay(Duration)}): no thread waits. Every answer it
 * does not return has its body released. The last attempt's answer or error reaches the
 * subscriber unchanged, and so does every other answer.</li>
 * <li>Each attempt writes the request's body anew from its {@code BodyInserter}: a value
 * ({@code bodyValue}) is encoded again, a publisher is subscribed again. A request whose
 * body must not be produced twice (a one-shot publisher) is marked with the attribute
 * {@link #SINGLE_ATTEMPT_ATTRIBUTE}: it gets its key but only one attempt.</li>
 * </ul>
 * It must be the first (outermost) of a client's filters, so that the filters after it
 * run again on every attempt; the auto-configuration puts it there. A second idempo
 * filter on the same client passes the request on untouched. A subscriber that
 * re-subscribes the exchange (an outer {@code retryWhen}) starts a new call with a new
 * key: leave the retrying to this filter.
 *
 * @author idempo
 */
public class IdempotencyExchangeFilterFunction implements ExchangeFilterFunction {

	/**
	 * The request attribute that limits a request to one attempt: set it to
	 * {@code Boolean.TRUE} (with {@code WebClient}'s {@code attribute(name, value)}) for
	 * a request whose body must not be produced twice. The same as the interceptor's.
	 */
	public static final String SINGLE_ATTEMPT_ATTRIBUTE = IdempotencyClientInterceptor.SINGLE_ATTEMPT_ATTRIBUTE;

	/**
	 * The key under which a Reactor {@code Context} carries the idempotent execution
	 * ({@link CurrentIdempotentCall}) that the calls made under it derive their keys
	 * from: {@link CurrentIdempotentCall#CONTEXT_KEY}.
	 */
	public static final String CURRENT_CALL_CONTEXT_KEY = CurrentIdempotentCall.CONTEXT_KEY;

	/** Marks a request that an idempo filter is already running. */
	private static final String ACTIVE_ATTRIBUTE = IdempotencyExchangeFilterFunction.class.getName() + ".active";

	private final KeyedCallPolicy policy;

	/**
	 * Creates a filter with {@link IdempotencyClientSettings#defaults()}.
	 */
	public IdempotencyExchangeFilterFunction() {
		this(IdempotencyClientSettings.defaults());
	}

	/**
	 * Creates a filter.
	 * @param settings what it does
	 */
	public IdempotencyExchangeFilterFunction(IdempotencyClientSettings settings) {
		this(settings, IdempotencyClientListener.NONE);
	}

	/**
	 * Creates a filter that reports its attempts and retries.
	 * @param settings what it does
	 * @param listener told of attempts and retries, on the thread that sees each; it must
	 * not block
	 */
	public IdempotencyExchangeFilterFunction(IdempotencyClientSettings settings, IdempotencyClientListener listener) {
		this.policy = new KeyedCallPolicy(settings, listener, new Backoff(settings));
	}

	/**
	 * What this filter does.
	 * @return the settings
	 */
	public IdempotencyClientSettings getSettings() {
		return this.policy.settings();
	}

	/**
	 * The clock that {@code Retry-After} dates are read against.
	 * @param clock the clock
	 */
	void setClock(Clock clock) {
		this.policy.setClock(clock);
	}

	/**
	 * A context writer that runs the work it is applied to as an idempotent execution
	 * with this identity: {@code mono.contextWrite(withCall(identity))}. Each
	 * subscription is a run of its own, its keyed calls counted from 0, so that a re-run
	 * sends the keys the first run sent.
	 * @param identity what identifies the execution across instances and re-runs: its
	 * storage key (a digest of scope and key), never raw client input
	 * @return the context writer
	 */
	public static Function<Context, Context> withCall(String identity) {
		return (context) -> context.put(CURRENT_CALL_CONTEXT_KEY, CurrentIdempotentCall.of(identity));
	}

	/**
	 * A context writer that puts an execution, as it is, in the context of the work it is
	 * applied to: for work that continues an execution (the one bound to a blocking
	 * thread, or one a reactive request flow made), its calls counted on.
	 * @param call the execution
	 * @return the context writer
	 */
	public static Function<Context, Context> withCall(CurrentIdempotentCall call) {
		return (context) -> context.put(CURRENT_CALL_CONTEXT_KEY, call);
	}

	/**
	 * The idempotent execution that calls made under a context belong to.
	 * @param context the subscriber's context
	 * @return the execution in the context, or else the one bound to the current thread,
	 * or {@code null}
	 */
	public static @Nullable CurrentIdempotentCall currentCall(ContextView context) {
		Object call = context.getOrDefault(CURRENT_CALL_CONTEXT_KEY, null);
		return (call instanceof CurrentIdempotentCall current) ? current : CurrentIdempotentCall.current();
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		if (request.attribute(ACTIVE_ATTRIBUTE).isPresent()) {
			// an idempo filter further out already keys and retries this request
			return next.exchange(request);
		}
		return Mono.deferContextual((context) -> keyedAttempts(request, next, currentCall(context)));
	}

	private Mono<ClientResponse> keyedAttempts(ClientRequest request, ExchangeFunction next,
			@Nullable CurrentIdempotentCall call) {
		String key = this.policy.keyFor(request.method(), request.url(), request.headers(), call);
		ClientRequest keyed = ClientRequest.from(request).headers((headers) -> {
			if (key != null) {
				headers.set(this.policy.keyHeader(), key);
			}
		}).attribute(ACTIVE_ATTRIBUTE, Boolean.TRUE).build();
		boolean singleAttempt = Boolean.TRUE.equals(request.attribute(SINGLE_ATTEMPT_ATTRIBUTE).orElse(null));
		int maxAttempts = this.policy.maxAttempts(request.method(), keyed.headers(), singleAttempt);
		return new Attempts(keyed, next, maxAttempts).attempt(1);
	}

	/**
	 * The attempts of one call.
	 */
	private final class Attempts {

		private final ClientRequest request;

		private final ExchangeFunction next;

		private final int maxAttempts;

		private final String method;

		Attempts(ClientRequest request, ExchangeFunction next, int maxAttempts) {
			this.request = request;
			this.next = next;
			this.maxAttempts = maxAttempts;
			this.method = KeyedCallPolicy.methodTag(request.method());
		}

		Mono<ClientResponse> attempt(int attempt) {
			// the outcome of this attempt alone is looked at: what a retry gets is the
			// retry's
			return this.next.exchange(this.request)
				.map(Outcome::answer)
				.onErrorResume((failure) -> Mono.just(Outcome.failure(failure)))
				.flatMap((outcome) -> (outcome.response() != null) ? answered(attempt, outcome.response())
						: failed(attempt, outcome.failure()));
		}

		private Mono<ClientResponse> answered(int attempt, ClientResponse response) {
			KeyedCallPolicy policy = IdempotencyExchangeFilterFunction.this.policy;
			int status = response.statusCode().value();
			policy.attempted(this.method, AttemptOutcome.of(status));
			RetryReason reason = RetryReason.of(status);
			if (reason == null || attempt >= this.maxAttempts) {
				return Mono.just(response);
			}
			Duration retryAfter;
			try {
				retryAfter = policy.retryAfter(response.headers().asHttpHeaders().getFirst(HttpHeaders.RETRY_AFTER));
			}
			catch (RuntimeException ex) {
				return release(response).then(Mono.error(ex));
			}
			return release(response).then(retry(attempt, reason, retryAfter));
		}

		private Mono<ClientResponse> failed(int attempt, @Nullable Throwable failure) {
			if (failure == null || !KeyedCallPolicy.isIoFailure(failure)) {
				return (failure != null) ? Mono.error(failure) : Mono.empty();
			}
			IdempotencyExchangeFilterFunction.this.policy.attempted(this.method, AttemptOutcome.IO_ERROR);
			RetryReason reason = KeyedCallPolicy.reasonFor(failure);
			if (reason == null || attempt >= this.maxAttempts) {
				return Mono.error(failure);
			}
			return retry(attempt, reason, null);
		}

		private Mono<ClientResponse> retry(int attempt, RetryReason reason, @Nullable Duration retryAfter) {
			KeyedCallPolicy policy = IdempotencyExchangeFilterFunction.this.policy;
			Duration wait = policy.waitBefore(attempt - 1, retryAfter);
			policy.retrying(this.method, reason);
			return Mono.delay(wait).then(Mono.defer(() -> attempt(attempt + 1)));
		}

		/** Drains a discarded answer, so that its connection goes back to the pool. */
		private static Mono<Void> release(ClientResponse response) {
			return response.releaseBody().onErrorResume((ex) -> Mono.empty());
		}

	}

	/**
	 * What an attempt got: an answer or a failure.
	 */
	private record Outcome(@Nullable ClientResponse response, @Nullable Throwable failure) {

		static Outcome answer(ClientResponse response) {
			return new Outcome(response, null);
		}

		static Outcome failure(Throwable failure) {
			return new Outcome(null, failure);
		}

	}

}
