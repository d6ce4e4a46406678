package dev.idempo.webflux;

import java.security.MessageDigest;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.util.context.Context;

import dev.idempo.core.Digests;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
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
 * short of its declared length, ran past it, or ran past the limit; the handler's
 * subscription sees the same error. A body shorter or longer than declared is a
 * {@link ServerWebInputException} (400) to the handler, as a body cut short is an
 * {@code EOFException} on Spring MVC.
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
	 */
	StreamedRequestBody(Flux<DataBuffer> source, MessageDigest digest, long declaredLength, long limit) {
		this.source = source;
		this.digest = digest;
		this.declaredLength = declaredLength;
		this.limit = limit;
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
	 * reads the rest without bound.
	 */
	private final class Relay implements CoreSubscriber<DataBuffer>, Subscription {

		private final @Nullable CoreSubscriber<? super DataBuffer> actual;

		/** Nobody reads the buffers any more: they are digested and released. */
		private volatile boolean draining;

		private volatile @Nullable Subscription upstream;

		/** Touched by the body's signals only, which are serial. */
		private long count;

		private boolean done;

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
			if (this.actual != null) {
				this.actual.onSubscribe(this);
			}
			else {
				subscription.request(Long.MAX_VALUE);
			}
		}

		@Override
		public void request(long n) {
			Subscription upstream = this.upstream;
			if (!this.draining && upstream != null) {
				upstream.request(n);
			}
		}

		@Override
		public void cancel() {
			Subscription upstream = this.upstream;
			if (!this.draining && upstream != null) {
				// the handler is done with the body; the fingerprint is not
				this.draining = true;
				upstream.request(Long.MAX_VALUE);
			}
		}

		@Override
		public void onNext(DataBuffer buffer) {
			if (this.done) {
				DataBufferUtils.release(buffer);
				return;
			}
			this.count += buffer.readableByteCount();
			if (this.count > StreamedRequestBody.this.limit) {
				DataBufferUtils.release(buffer);
				Subscription upstream = this.upstream;
				if (upstream != null) {
					upstream.cancel();
				}
				onError(new DataBufferLimitException(
						"The request body is longer than " + StreamedRequestBody.this.limit + " bytes"));
				return;
			}
			long declared = StreamedRequestBody.this.declaredLength;
			if (this.count > declared) {
				// a filter before idempo's made it longer than the client declared: its
				// digest would be of neither the request sent nor the one held whole
				DataBufferUtils.release(buffer);
				Subscription upstream = this.upstream;
				if (upstream != null) {
					upstream.cancel();
				}
				onError(new ServerWebInputException("The request body ran past its declared Content-Length " + declared
						+ " (" + this.count + " bytes so far)"));
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
		}

		@Override
		public void onError(Throwable failure) {
			if (this.done) {
				return;
			}
			this.done = true;
			StreamedRequestBody.this.digested.tryEmitError(failure);
			CoreSubscriber<? super DataBuffer> actual = this.actual;
			if (!this.draining && actual != null) {
				actual.onError(failure);
			}
		}

		@Override
		public void onComplete() {
			if (this.done) {
				return;
			}
			long declared = StreamedRequestBody.this.declaredLength;
			if (this.count < declared) {
				onError(new ServerWebInputException("The request body ended after " + this.count
						+ " bytes, short of its declared Content-Length " + declared));
				return;
			}
			this.done = true;
			CoreSubscriber<? super DataBuffer> actual = this.actual;
			if (!this.draining && actual != null) {
				actual.onComplete();
			}
			StreamedRequestBody.this.digested.tryEmitValue(Digests.hex(StreamedRequestBody.this.digest));
		}

	}

}
