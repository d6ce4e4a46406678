package dev.idempo.web;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.Part;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.Digests;
import dev.idempo.core.RequestFingerprints;
import dev.idempo.core.StorageKeys;

/**
 * The fingerprint of a request: a SHA-256 digest of its method, path, query string and
 * body bytes. A key reused with a different fingerprint is rejected with {@code 422}.
 * <p>
 * Form and multipart bodies are read by the servlet container itself, often before any
 * application code runs, so their {@linkplain #canonicalForm(HttpServletRequest)
 * canonical form} (parsed parameters and parts) stands in for the raw bytes. Every byte
 * fed to the digests here is part of stored records' identity: changing it makes every
 * retry of a request stored before the change a {@code 422}.
 *
 * @author idempo
 */
public final class RequestFingerprint {

	private RequestFingerprint() {
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
		return RequestFingerprints.of(method, path, query, body);
	}

	/**
	 * Computes the storage key of a record: a digest of the caller scope and the
	 * idempotency key, so that raw client input never reaches a store and two callers
	 * never share a record.
	 * @param callerScope the caller scope
	 * @param idempotencyKey the parsed idempotency key
	 * @return the storage key as lowercase hex (64 characters)
	 */
	public static String storageKey(String callerScope, String idempotencyKey) {
		return StorageKeys.of(callerScope, idempotencyKey);
	}

	/**
	 * Whether a body of this type is parsed by the container (form and multipart posts),
	 * so that its {@linkplain #canonicalForm canonical form} is fingerprinted instead of
	 * its bytes.
	 * @param contentType the request's content type, or {@code null}
	 * @return whether the body is a form
	 */
	public static boolean isForm(@Nullable String contentType) {
		return RequestFingerprints.isForm(contentType);
	}

	/**
	 * The bytes that stand for a form or multipart body in its fingerprint: every
	 * parameter in name order, then (for multipart) every part in request order with its
	 * name, file name, content type and the SHA-256 of its content.
	 * @param request a form or multipart request
	 * @return the canonical form
	 * @throws IOException if the parts cannot be read
	 */
	public static byte[] canonicalForm(HttpServletRequest request) throws IOException {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		DataOutputStream out = new DataOutputStream(bytes);
		Map<String, List<String>> parameters = new LinkedHashMap<>();
		request.getParameterMap().forEach((name, values) -> parameters.put(name, Arrays.asList(values)));
		RequestFingerprints.writeParameters(out, parameters);
		String contentType = request.getContentType();
		if (contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("multipart/")) {
			try {
				for (Part part : request.getParts()) {
					writeField(out, "f");
					writeField(out, part.getName());
					writeField(out, String.valueOf(part.getSubmittedFileName()));
					writeField(out, String.valueOf(part.getContentType()));
					out.write(digest(part));
				}
			}
			catch (ServletException ex) {
				throw new IOException("Could not read multipart request for its fingerprint", ex);
			}
		}
		out.flush();
		return bytes.toByteArray();
	}

	private static void writeField(DataOutputStream out, String value) throws IOException {
		RequestFingerprints.writeField(out, value);
	}

	private static byte[] digest(Part part) throws IOException {
		MessageDigest digest = Digests.sha256();
		try (InputStream in = part.getInputStream()) {
			byte[] buffer = new byte[8192];
			int count;
			while ((count = in.read(buffer)) != -1) {
				digest.update(buffer, 0, count);
			}
		}
		return digest.digest();
	}

}
