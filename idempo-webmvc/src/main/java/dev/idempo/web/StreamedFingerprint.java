package dev.idempo.web;

import java.util.function.UnaryOperator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The fingerprint of a request whose body {@linkplain BufferedBodyRequest#stream
 * streams}: its whole body's digest once the body was read to its end (by the handler,
 * then by the flow discarding what it left).
 * <p>
 * A body that does not end cleanly after the handler ran (the client went away while its
 * rest was discarded, or a filter lengthened it past the limit) cannot give that digest,
 * and the handler must not run again for the key. Its record is stored under the digest
 * of the bytes the application had read when the handler answered, written
 * {@code partial-body:<count>:<digest>} (never a whole body's fingerprint, which is
 * hexadecimal): the handler's response depends on those bytes only, so a retry that
 * streams a body whose first {@code count} bytes are the same gets it replayed; any other
 * retry gets 422.
 *
 * @author idempo
 */
final class StreamedFingerprint implements PendingFingerprint {

	private static final Log logger = LogFactory.getLog(StreamedFingerprint.class);

	static final String PARTIAL = "partial-body:";

	private final BufferedBodyRequest request;

	private final StreamedBody body;

	private final long limit;

	private final UnaryOperator<String> withHeaders;

	/**
	 * Creates a fingerprint for a body that streams.
	 * @param request the request whose body streams
	 * @param body its digest, which the request feeds
	 * @param limit the most body bytes read
	 * @param withHeaders adds the fingerprinted headers' values to a body digest
	 */
	StreamedFingerprint(BufferedBodyRequest request, StreamedBody body, long limit, UnaryOperator<String> withHeaders) {
		this.request = request;
		this.body = body;
		this.limit = limit;
		this.withHeaders = withHeaders;
	}

	@Override
	public String get() {
		this.body.startDraining();
		this.request.finishStream(this.limit);
		String whole = this.body.whole();
		if (whole != null) {
			return this.withHeaders.apply(whole);
		}
		String prefix = this.body.prefix();
		long read = this.body.prefixLength();
		if (prefix == null) {
			throw new IllegalStateException("No digest of the body's first " + read + " bytes");
		}
		logger.warn("The request body did not end cleanly after the handler ran, which had read " + read
				+ " bytes of it; the response is stored under those bytes: a retry whose body starts with them "
				+ "replays it, any other gets 422");
		return PARTIAL + read + ":" + this.withHeaders.apply(prefix);
	}

	@Override
	public boolean matches(String stored) {
		if (!stored.startsWith(PARTIAL)) {
			this.request.finishStream(this.limit);
			String whole = this.body.whole();
			return whole != null && stored.equals(this.withHeaders.apply(whole));
		}
		int colon = stored.indexOf(':', PARTIAL.length());
		long length;
		try {
			length = (colon > 0) ? Long.parseLong(stored.substring(PARTIAL.length(), colon)) : -1;
		}
		catch (NumberFormatException ex) {
			length = -1;
		}
		boolean marked = length >= 0 && this.body.markPrefix(length);
		this.body.startDraining();
		this.request.finishStream(this.limit);
		String prefix = marked ? this.body.prefix() : null;
		return prefix != null && stored.substring(colon + 1).equals(this.withHeaders.apply(prefix));
	}

	@Override
	public boolean consumesBody() {
		return true;
	}

	@Override
	public boolean bodyFailed() {
		return this.body.hasApplicationReadFailed();
	}

}
