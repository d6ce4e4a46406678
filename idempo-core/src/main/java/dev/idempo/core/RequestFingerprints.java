package dev.idempo.core;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * The fingerprint of an HTTP request, whatever the web stack: a SHA-256 digest of its
 * method, path, query string and body bytes. Spring MVC and WebFlux compute it alike, so
 * that a record one of them stored answers a retry that reaches the other. Every byte fed
 * to the digests here is part of stored records' identity: changing it makes every retry
 * of a request stored before the change a {@code 422}.
 *
 * @author idempo
 */
public final class RequestFingerprints {

	private static final int VERSION = 1;

	private RequestFingerprints() {
	}

	/**
	 * Computes a fingerprint.
	 * @param method the HTTP method, such as {@code POST}
	 * @param path the request path as sent (not decoded)
	 * @param query the raw query string, or {@code null}
	 * @param body the body bytes (or their canonical form for form posts)
	 * @return the fingerprint as lowercase hex
	 */
	public static String of(String method, String path, @Nullable String query, byte[] body) {
		MessageDigest digest = streamed(method, path, query, body.length);
		digest.update(body);
		return Digests.hex(digest);
	}

	/**
	 * Starts the same fingerprint as {@link #of} for a body whose length is known before
	 * its bytes arrive (a declared {@code Content-Length}): feed the digest exactly
	 * {@code bodyLength} body bytes as they stream, then complete it with
	 * {@link Digests#hex}. The result equals {@link #of} over the same bytes, so records
	 * stored either way answer each other, on either web stack.
	 * @param method the HTTP method, such as {@code POST}
	 * @param path the request path as sent (not decoded)
	 * @param query the raw query string, or {@code null}
	 * @param bodyLength the number of body bytes that will follow, at most
	 * {@link Integer#MAX_VALUE}
	 * @return the digest, waiting for the body bytes
	 */
	public static MessageDigest streamed(String method, String path, @Nullable String query, long bodyLength) {
		if (bodyLength < 0 || bodyLength > Integer.MAX_VALUE) {
			throw new IllegalArgumentException("'bodyLength' must be between 0 and " + Integer.MAX_VALUE);
		}
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, "fingerprint/" + VERSION);
		Digests.field(digest, method);
		Digests.field(digest, path);
		Digests.field(digest, (query != null) ? "?" + query : "");
		Digests.length(digest, (int) bodyLength);
		return digest;
	}

	/**
	 * Whether a body of this type is a form ({@code application/x-www-form-urlencoded} or
	 * {@code multipart/*}), whose parsed parameters stand in for its bytes.
	 * @param contentType the request's content type, or {@code null}
	 * @return whether the body is a form
	 */
	public static boolean isForm(@Nullable String contentType) {
		if (contentType == null) {
			return false;
		}
		String type = contentType.toLowerCase(Locale.ROOT);
		return type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/");
	}

	/**
	 * The bytes that stand for a form's parameters (those of the query string and of the
	 * body, as a servlet container merges them) in its fingerprint: every parameter in
	 * name order with its values in order.
	 * @param parameters the parameters
	 * @return the canonical bytes
	 */
	public static byte[] canonicalParameters(Map<String, List<String>> parameters) {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		DataOutputStream out = new DataOutputStream(bytes);
		try {
			writeParameters(out, parameters);
			out.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return bytes.toByteArray();
	}

	/**
	 * Writes the canonical form of parameters, as {@link #canonicalParameters}.
	 * @param out where to write
	 * @param parameters the parameters
	 * @throws IOException if {@code out} fails
	 */
	public static void writeParameters(DataOutputStream out, Map<String, List<String>> parameters) throws IOException {
		for (Map.Entry<String, List<String>> parameter : new TreeMap<>(parameters).entrySet()) {
			writeField(out, "p");
			writeField(out, parameter.getKey());
			out.writeInt(parameter.getValue().size());
			for (String value : parameter.getValue()) {
				writeField(out, value);
			}
		}
	}

	/**
	 * Writes a string field: its UTF-8 length as four bytes, big-endian, then its bytes.
	 * @param out where to write
	 * @param value the value
	 * @throws IOException if {@code out} fails
	 */
	public static void writeField(DataOutputStream out, String value) throws IOException {
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		out.writeInt(bytes.length);
		out.write(bytes);
	}

}
