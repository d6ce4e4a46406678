package dev.idempo.webflux;

import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferWrapper;
import org.springframework.core.io.buffer.PooledDataBuffer;

/**
 * A buffer that counts its references, as a pooled (Netty) one does, so that a test sees
 * whether it was released.
 *
 * @author idempo
 */
final class CountedDataBuffer extends DataBufferWrapper implements PooledDataBuffer {

	final AtomicInteger references = new AtomicInteger(1);

	CountedDataBuffer(DataBuffer delegate) {
		super(delegate);
	}

	@Override
	public boolean isAllocated() {
		return this.references.get() > 0;
	}

	@Override
	public PooledDataBuffer retain() {
		this.references.incrementAndGet();
		return this;
	}

	@Override
	public PooledDataBuffer touch(Object hint) {
		return this;
	}

	@Override
	public boolean release() {
		int left = this.references.decrementAndGet();
		if (left < 0) {
			throw new IllegalStateException("released more often than retained");
		}
		return left == 0;
	}

}
