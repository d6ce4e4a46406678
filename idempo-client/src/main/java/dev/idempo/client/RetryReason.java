package dev.idempo.client;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ProtocolException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;

import org.jspecify.annotations.Nullable;

/**
 * Why an attempt is retried: one of the I/O failures or statuses that a retry with the
 * same key may cure. A closed set, so that it can tag meters.
 *
 * @author idempo
 */
public enum RetryReason {

	/** The connection could not be made: refused, or no route to the host. */
	CONNECTION_REFUSED("refused"),

	/**
	 * The connection broke before the whole answer arrived (reset, closed early): the
	 * server may or may not have acted on the request.
	 */
	CONNECTION_RESET("reset"),

	/** Connecting or waiting for the answer timed out. */
	TIMEOUT("timeout"),

	/** 408 Request Timeout. */
	REQUEST_TIMEOUT("408"),

	/**
	 * 409 Conflict: with idempotency keys, another request with the same key is still
	 * being processed.
	 */
	CONFLICT("409"),

	/** 425 Too Early. */
	TOO_EARLY("425"),

	/** 429 Too Many Requests. */
	TOO_MANY_REQUESTS("429"),

	/** 502 Bad Gateway. */
	BAD_GATEWAY("502"),

	/** 503 Service Unavailable. */
	SERVICE_UNAVAILABLE("503"),

	/** 504 Gateway Timeout. */
	GATEWAY_TIMEOUT("504");

	private final String tag;

	RetryReason(String tag) {
		this.tag = tag;
	}

	/**
	 * The value of the {@code reason} tag of the retry meter.
	 * @return the tag value
	 */
	public String tag() {
		return this.tag;
	}

	/**
	 * The reason to retry an answer with this status.
	 * @param status the status code
	 * @return the reason, {@code null} if the answer is final
	 */
	public static @Nullable RetryReason of(int status) {
		return switch (status) {
			case 408 -> REQUEST_TIMEOUT;
			case 409 -> CONFLICT;
			case 425 -> TOO_EARLY;
			case 429 -> TOO_MANY_REQUESTS;
			case 502 -> BAD_GATEWAY;
			case 503 -> SERVICE_UNAVAILABLE;
			case 504 -> GATEWAY_TIMEOUT;
			default -> null;
		};
	}

	/**
	 * The reason to retry after this I/O failure. Failures that another attempt cannot
	 * cure are final: an unknown host, a TLS failure (a handshake, a certificate, a TLS
	 * protocol error) unless the connection under it was reset, an answer that is not
	 * HTTP, and an interrupted thread (whoever interrupted it wants the call to end).
	 * @param failure the failure of an attempt
	 * @return the reason, {@code null} if the failure is final
	 */
	public static @Nullable RetryReason of(IOException failure) {
		boolean tls = false;
		Throwable cause = failure;
		// bounded: a cause chain may be a cycle
		for (int depth = 0; cause != null && depth < 32; depth++, cause = cause.getCause()) {
			if (cause instanceof UnknownHostException || cause instanceof SSLHandshakeException
					|| cause instanceof SSLPeerUnverifiedException || cause instanceof ProtocolException) {
				return null;
			}
			if (cause instanceof ConnectException || cause instanceof NoRouteToHostException) {
				return CONNECTION_REFUSED;
			}
			if (cause instanceof SocketTimeoutException || cause instanceof HttpTimeoutException) {
				return TIMEOUT;
			}
			if (cause instanceof InterruptedIOException) {
				// not a timeout: the thread was interrupted
				return null;
			}
			if (cause instanceof SocketException || cause instanceof EOFException) {
				// also under a TLS exception ("SSLException: Connection reset")
				return CONNECTION_RESET;
			}
			tls |= cause instanceof SSLException;
		}
		return tls ? null : CONNECTION_RESET;
	}

}
