package dev.idempo.webflux;

import java.security.MessageDigest;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

import dev.idempo.core.Digests;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebInputException;

/**
 * A protected request's body of declared length ({@code Content-Length}), digested as it
 * streams and never held: the WebFlux counterpart of Spring MVC's streamed bodies. The
 * handler reads {@link #body()}, whose buffers are digested as they pass (their read
 * positions untouched); what it leaves is read by {@link #digest()}, which digests and
 * releases every buffer:
 * <ul>
 * <li>a handler that never subscribes to the body: {@link #digest()} subscribes and
 * drains it;</li>
 * <li>a handler that cancels its subscription partway: the rest is read at once (no
 * longer bounded by the handler's demand), digested and released, and no buffer reaches
 * the handler after its cancel;</li>
 * <li>otherwise the handler's demand paces the body, as if idempo were not there.</li>
 * </ul>
 * The digest is that of the body that ended cleanly: {@link #digest()} signals it once
 * the last buffer passed, or an error if the body failed (the client went away), ended
 * short of its declared length, ran past it, ran past the limit, or went idle; the
 * handler's subscription sees the same error. A body shorter or longer than declared is a
 * {@link ServerWebInputException} (400) to the handler, as a body cut short is an
 * {@code EOFException} on Spring MVC.
 * <p>
 * A body that goes idle (no byte for the idle timeout while bytes are asked for: the
 * client went silent mid-body, its connection still open) fails with a
 * {@link ResponseStatusException} of status 408, and its upstream is cancelled: Reactor
 * Netty has no read timeout, and the claim's lease is renewed while the handler runs, so
 * without it a silent client would hold its key for as long as its connection stays open.
 * Time counts only while someone asks for bytes: a handler that reads slowly (a backend
 * that reads a forwarded body slowly) is not a silent client. The timer is the filter's
 * {@link IdleBodies}: one periodic check on a {@link Scheduler} (by default
 * {@link Schedulers#parallel()}), never on an event loop, for every body being read.
 * <p>
 * The body can be subscribed to once (as Reactor Netty's), by the handler or by
 * {@link #digest()}, whichever comes first. Nothing here blocks.
 *
 * @author idempo
 */
final class StreamedRequestBody {

	private final Flux<DataBuffer> source;

	private final MessageDigest digest;

	private final long declaredLength;

	private final long limit;

	private final IdleBodies idleBodies;

	private final AtomicBoolean subscribed = new AtomicBoolean();

	private final Sinks.One<String> digested = Sinks.one();

	private final Flux<DataBuffer> body = new HandlerBody();

	/**
	 * Creates a body that streams.
	 * @param source the body as the server delivers it
	 * @param digest the digest, with everything before the body already added
	 * ({@code RequestFingerprints.streamed})
	 * @param declaredLength the declared length
	 * @param limit the most body bytes read ({@code idempo.max-request-size}); more fail
	 * the body
	 * @param idleTimeout how long the body may go without a byte while bytes are asked
	 * for ({@code idempo.request-body-timeout}), positive
	 * @param timer where the idle timer runs
	 */
	StreamedRequestBody(Flux<DataBuffer> source, MessageDigest digest, long declaredLength, long limit,
			Duration idleTimeout, Scheduler timer) {
		this(source, digest, declaredLength, limit, new IdleBodies(idleTimeout, timer));
	}

	/**
	 * Creates the body, its idle timer shared with the other bodies of its filter.
	 * @param source the server's body
	 * @param digest the digest, with everything before the body already added
	 * @param declaredLength the declared length
	 * @param limit the most body bytes read ({@code idempo.max-request-size}); more fail
	 * the body
	 * @param idleBodies the idle timer ({@code idempo.request-body-timeout})
	 */
	StreamedRequestBody(Flux<DataBuffer> source, MessageDigest digest, long declaredLength, long limit,
			IdleBodies idleBodies) {
		this.source = source;
		this.digest = digest;
		this.declaredLength = declaredLength;
		this.limit = limit;
		this.idleBodies = idleBodies;
	}

	/**
	 * The body the handler reads: the same buffers, digested as they pass.
	 * @return the body, subscribable once
	 */
	Flux<DataBuffer> body() {
		return this.body;
	}

	/**
	 * The digest of the whole body, as lowercase hex, once it ended; subscribing reads
	 * (and releases) what nobody read: the whole body if the handler never subscribed to
	 * it. Errors if the body did not end cleanly.
	 * @return the digest
	 */
	Mono<String> digest() {
		return Mono.defer(() -> {
			if (this.subscribed.compareAndSet(false, true)) {
				this.source.subscribe(new Relay(null));
			}
			return this.digested.asMono();
		});
	}

	/**
	 * Whether an error of the body is its idle timeout.
	 * @param failure the error
	 * @return whether the body went idle
	 */
	static boolean isIdleTimeout(Throwable failure) {
		return failure instanceof IdleTimeoutException;
	}

	/** The handler's face of the body: one subscription, relayed. */
	private final class HandlerBody extends Flux<DataBuffer> {

		@Override
		public void subscribe(CoreSubscriber<? super DataBuffer> actual) {
			if (!StreamedRequestBody.this.subscribed.compareAndSet(false, true)) {
				Operators.error(actual, new IllegalStateException("The request body was read already; it streams "
						+ "(idempo digests it as it passes) and can be read once"));
				return;
			}
			StreamedRequestBody.this.source.subscribe(new Relay(actual));
		}

	}

	/**
	 * Between the server's body and its one reader: digests every buffer, forwards it to
	 * the handler or releases it, and, once the handler cancelled (or if there is none),
	 * reads the rest without bound; its idle timer fails the body when no byte came for
	 * the idle timeout while some were asked for.
	 * <p>
	 * The body's signals are serial; the timer's is not, so every signal to the reader
	 * goes through {@link #state}: a buffer is relayed only from {@code IDLE} (made
	 * {@code BUSY} for the time it takes, a buffer relayed within it, re-entrantly, keeps
	 * it), the timer ends the body only from {@code IDLE}, and whoever moves it to
	 * {@code TERMINATED} signals the end, once.
	 */
	private final class Relay implements CoreSubscriber<DataBuffer>, Subscription, Runnable {

		private static final int IDLE = 0;

		private static final int BUSY = 1;

		private static final int TERMINATED = 2;

		private final @Nullable CoreSubscriber<? super DataBuffer> actual;

		private final AtomicInteger state = new AtomicInteger(IDLE);

		/** Nobody reads the buffers any more: they are digested and released. */
		private volatile boolean draining;

		private volatile @Nullable Subscription upstream;

		/** Buffers asked for and not yet arrived; unbounded once draining. */
		private final AtomicLong requested = new AtomicLong();

		/**
		 * When the body last made progress: a buffer arrived, or bytes were asked for
		 * after none were ({@link System#nanoTime()}).
		 */
		private volatile long progressed;

		/** Touched by the body's signals only, which are serial. */
		private long count;

		Relay(@Nullable CoreSubscriber<? super DataBuffer> actual) {
			this.actual = actual;
			this.draining = (actual == null);
		}

		@Override
		public Context currentContext() {
			return (this.actual != null) ? this.actual.currentContext() : Context.empty();
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			if (!Operators.validate(this.upstream, subscription)) {
				return;
			}
			this.upstream = subscription;
			this.progressed = System.nanoTime();
			StreamedRequestBody.this.idleBodies.watch(this);
			if (this.actual != null) {
				this.actual.onSubscribe(this);
			}
			else {
				demand(Long.MAX_VALUE);
				subscription.request(Long.MAX_VALUE);
			}
		}

		@Override
		public void request(long n) {
			Subscription upstream = this.upstream;
			if (!this.draining && upstream != null && Operators.validate(n)) {
				demand(n);
				upstream.request(n);
			}
		}

		@Override
		public void cancel() {
			Subscription upstream = this.upstream;
			if (!this.draining && upstream != null) {
				// the handler is done with the body; the fingerprint is not
				this.draining = true;
				demand(Long.MAX_VALUE);
				upstream.request(Long.MAX_VALUE);
			}
		}

		/** Buffers are asked for: if none were, the idle time starts now. */
		private void demand(long n) {
			long before = (n == Long.MAX_VALUE) ? this.requested.getAndSet(Long.MAX_VALUE)
					: this.requested.getAndAccumulate(n, Operators::addCap);
			if (before == 0) {
				this.progressed = System.nanoTime();
			}
		}

		@Override
		public void onNext(DataBuffer buffer) {
			boolean nested = false;
			if (!this.state.compareAndSet(IDLE, BUSY)) {
				// BUSY: relayed re-entrantly from a buffer being relayed (the body's
				// signals are serial); TERMINATED: the body failed, the timer ended it
				nested = (this.state.get() == BUSY);
				if (!nested) {
					DataBufferUtils.release(buffer);
					return;
				}
			}
			this.progressed = System.nanoTime();
			this.requested.getAndUpdate((asked) -> (asked == Long.MAX_VALUE) ? asked : Math.max(0, asked - 1));
			this.count += buffer.readableByteCount();
			Throwable tooLong = tooLong();
			if (tooLong != null) {
				DataBufferUtils.release(buffer);
				cancelUpstream();
				this.state.set(TERMINATED);
				terminate(tooLong);
				return;
			}
			try (DataBuffer.ByteBufferIterator buffers = buffer.readableByteBuffers()) {
				while (buffers.hasNext()) {
					StreamedRequestBody.this.digest.update(buffers.next());
				}
			}
			CoreSubscriber<? super DataBuffer> actual = this.actual;
			if (this.draining || actual == null) {
				DataBufferUtils.release(buffer);
			}
			else {
				actual.onNext(buffer);
			}
			if (!nested) {
				this.state.compareAndSet(BUSY, IDLE);
			}
		}

		/**
		 * The error of a body that ran past its limit or its declared length, else
		 * {@code null}.
		 */
		private @Nullable Throwable tooLong() {
			if (this.count > StreamedRequestBody.this.limit) {
				return new DataBufferLimitException(
						"The request body is longer than " + StreamedRequestBody.this.limit + " bytes");
			}
			long declared = StreamedRequestBody.this.declaredLength;
			if (this.count > declared) {
				// a filter before idempo's made it longer than the client declared: its
				// digest would be of neither the request sent nor the one held whole
				return new ServerWebInputException("The request body ran past its declared Content-Length " + declared
						+ " (" + this.count + " bytes so far)");
			}
			return null;
		}

		@Override
		public void onError(Throwable failure) {
			if (endsFromSignal()) {
				terminate(failure);
			}
		}

		@Override
		public void onComplete() {
			if (!endsFromSignal()) {
				return;
			}
			long declared = StreamedRequestBody.this.declaredLength;
			if (this.count < declared) {
				terminate(new ServerWebInputException("The request body ended after " + this.count
						+ " bytes, short of its declared Content-Length " + declared));
				return;
			}
			disposeCheck();
			CoreSubscriber<? super DataBuffer> actual = this.actual;
			if (!this.draining && actual != null) {
				actual.onComplete();
			}
			StreamedRequestBody.this.digested.tryEmitValue(Digests.hex(StreamedRequestBody.this.digest));
		}

		/**
		 * Whether the body's own end signal ends the relay: from {@code IDLE}, or from
		 * {@code BUSY} within a buffer being relayed; not once the timer or the relay
		 * ended it.
		 */
		private boolean endsFromSignal() {
			if (this.state.compareAndSet(IDLE, TERMINATED)) {
				return true;
			}
			return this.state.compareAndSet(BUSY, TERMINATED);
		}

		/** Signals the error; the state is {@code TERMINATED}, set by the caller. */
		private void terminate(Throwable failure) {
			disposeCheck();
			StreamedRequestBody.this.digested.tryEmitError(failure);
			CoreSubscriber<? super DataBuffer> actual = this.actual;
			if (!this.draining && actual != null) {
				actual.onError(failure);
			}
		}

		private void cancelUpstream() {
			Subscription upstream = this.upstream;
			if (upstream != null) {
				upstream.cancel();
			}
		}

		/** The idle check: ends the body if it went idle. */
		@Override
		public void run() {
			if (this.state.get() == TERMINATED) {
				disposeCheck();
				return;
			}
			IdleBodies idle = StreamedRequestBody.this.idleBodies;
			if (this.requested.get() > 0 && System.nanoTime() - this.progressed >= idle.timeoutNanos()
					&& this.state.compareAndSet(IDLE, TERMINATED)) {
				cancelUpstream();
				terminate(
						new IdleTimeoutException(idle.timeout(), this.count, StreamedRequestBody.this.declaredLength));
			}
		}

		private void disposeCheck() {
			StreamedRequestBody.this.idleBodies.unwatch(this);
		}

	}

	/**
	 * No byte of the body arrived for the idle timeout while bytes were asked for: 408
	 * Request Timeout.
	 */
	static final class IdleTimeoutException extends ResponseStatusException {

		IdleTimeoutException(Duration timeout, long received, long declared) {
			super(HttpStatus.REQUEST_TIMEOUT, "No byte of the request body arrived for " + timeout + " (" + received
					+ " of its declared " + declared + " bytes arrived)");
		}

	}

}
