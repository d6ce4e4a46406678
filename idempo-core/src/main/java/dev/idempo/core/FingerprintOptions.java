package dev.idempo.core;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * What a request's fingerprint covers beyond its method, path, query and body:
 * {@code idempo.fingerprint.ignored-fields}, JSON Pointers (RFC 6901) left out of a JSON
 * body, and {@code idempo.fingerprint.headers}, request headers whose values join it.
 * Immutable; resolved once per handler. {@link #NONE} changes nothing: the fingerprint
 * stays the one of records stored before these options existed.
 *
 * @author idempo
 */
public final class FingerprintOptions {

	/** No ignored fields, no headers. */
	public static final FingerprintOptions NONE = new FingerprintOptions(List.of(), List.of());

	private final List<String> ignoredFields;

	private final List<String> headers;

	private final @Nullable CanonicalJson json;

	private FingerprintOptions(List<String> ignoredFields, List<String> headers) {
		this.ignoredFields = ignoredFields;
		this.headers = headers;
		this.json = ignoredFields.isEmpty() ? null : new CanonicalJson(ignoredFields);
	}

	/**
	 * Options.
	 * @param ignoredFields JSON Pointers of fields left out of a JSON body's fingerprint
	 * @param headers names of request headers whose values join the fingerprint
	 * (case-insensitive)
	 * @return the options
	 * @throws IllegalArgumentException if a pointer is not an RFC 6901 JSON Pointer to a
	 * field (empty, or not starting with {@code /}, or with a {@code ~} not followed by
	 * {@code 0} or {@code 1})
	 */
	public static FingerprintOptions of(List<String> ignoredFields, List<String> headers) {
		List<String> pointers = new ArrayList<>(ignoredFields.size());
		for (String pointer : ignoredFields) {
			String problem = pointerProblem(pointer);
			if (problem != null) {
				throw new IllegalArgumentException(problem);
			}
			pointers.add(pointer.trim());
		}
		TreeSet<String> names = new TreeSet<>();
		headers.forEach((name) -> names.add(name.trim().toLowerCase(Locale.ROOT)));
		return (pointers.isEmpty() && names.isEmpty()) ? NONE
				: new FingerprintOptions(List.copyOf(pointers), List.copyOf(names));
	}

	/**
	 * Checks one JSON Pointer.
	 * @param pointer the pointer
	 * @return why it is invalid, or {@code null} if it is valid
	 */
	public static @Nullable String pointerProblem(String pointer) {
		String value = pointer.trim();
		if (!value.startsWith("/")) {
			return "'" + pointer + "' is not a JSON Pointer to a field (RFC 6901): it must start with '/', "
					+ "as in /timestamp or /meta/requestId";
		}
		for (int i = value.indexOf('~'); i >= 0; i = value.indexOf('~', i + 1)) {
			if (i + 1 >= value.length() || (value.charAt(i + 1) != '0' && value.charAt(i + 1) != '1')) {
				return "'" + pointer + "' is not a JSON Pointer (RFC 6901): '~' must be followed by 0 (for '~') "
						+ "or 1 (for '/')";
			}
		}
		return null;
	}

	/**
	 * The JSON Pointers left out of a JSON body's fingerprint.
	 * @return the pointers, trimmed
	 */
	public List<String> ignoredFields() {
		return this.ignoredFields;
	}

	/**
	 * The request headers whose values join the fingerprint.
	 * @return the names, lower case and sorted
	 */
	public List<String> headers() {
		return this.headers;
	}

	/**
	 * Whether a body of this type is fingerprinted by its canonical form ({@link #body}),
	 * which needs the whole body at once; any other body is fingerprinted as sent and can
	 * be digested as it streams.
	 * @param contentType the request's content type, or {@code null}
	 * @return whether the whole body is needed
	 */
	public boolean needsWholeBody(@Nullable String contentType) {
		return this.json != null && CanonicalJson.isJson(contentType);
	}

	/**
	 * What of a body is fingerprinted: with ignored fields, a JSON body
	 * ({@code application/json} or {@code application/*+json}) that parses becomes the
	 * canonical form of what remains once they are left out (object members sorted by
	 * name, whitespace and number spelling ignored); anything else, and every body when
	 * no field is ignored, is fingerprinted as sent.
	 * @param contentType the request's content type, or {@code null}
	 * @param body the body as sent
	 * @return the bytes to fingerprint
	 */
	public byte[] body(@Nullable String contentType, byte[] body) {
		CanonicalJson json = this.json;
		if (json == null || !CanonicalJson.isJson(contentType)) {
			return body;
		}
		byte[] canonical = json.canonical(body);
		return (canonical != null) ? canonical : body;
	}

	/**
	 * Adds the configured headers' values to a fingerprint; without headers, the
	 * fingerprint as it is. A header that is absent differs from one sent empty; a header
	 * sent several times counts with every value in order.
	 * @param fingerprint the fingerprint of the rest of the request
	 * @param values a header's values by name, empty if the request has none
	 * @return the fingerprint
	 */
	public String withHeaders(String fingerprint, Function<String, List<String>> values) {
		if (this.headers.isEmpty()) {
			return fingerprint;
		}
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, "fingerprint-headers/1");
		Digests.field(digest, fingerprint);
		for (String name : this.headers) {
			List<String> sent = values.apply(name);
			Digests.field(digest, name);
			Digests.field(digest, Integer.toString(sent.size()));
			sent.forEach((value) -> Digests.field(digest, value));
		}
		return Digests.hex(digest);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other == this || (other instanceof FingerprintOptions that
				&& this.ignoredFields.equals(that.ignoredFields) && this.headers.equals(that.headers));
	}

	@Override
	public int hashCode() {
		return 31 * this.ignoredFields.hashCode() + this.headers.hashCode();
	}

	@Override
	public String toString() {
		return "ignored-fields " + this.ignoredFields + ", headers " + this.headers;
	}

}
