package dev.idempo.test;

import java.util.UUID;

import org.springframework.test.web.servlet.request.RequestPostProcessor;

/**
 * MockMvc request post-processors that send idempotency keys.
 *
 * <pre class="code">
 * mvc.perform(post("/payments").with(idempotencyKey("pay-1")).content(json));
 * mvc.post().uri("/payments").with(newIdempotencyKey()).content(json).exchange();
 * </pre>
 *
 * @author idempo
 */
public final class IdempotencyRequestPostProcessors {

	/** The header idempo reads keys from by default. */
	public static final String KEY_HEADER = "Idempotency-Key";

	private IdempotencyRequestPostProcessors() {
	}

	/**
	 * Sends {@code key} as the request's idempotency key, as a Structured Fields string.
	 * @param key the key, 1 to 255 printable ASCII characters
	 * @return the post-processor
	 */
	public static RequestPostProcessor idempotencyKey(String key) {
		return idempotencyKey(KEY_HEADER, key);
	}

	/**
	 * Sends {@code key} in {@code header}, for applications that configured another
	 * header ({@code idempo.key-header}).
	 * @param header the header name
	 * @param key the key
	 * @return the post-processor
	 */
	public static RequestPostProcessor idempotencyKey(String header, String key) {
		String quoted = "\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
		return (request) -> {
			request.addHeader(header, quoted);
			return request;
		};
	}

	/**
	 * Sends a new random key (a UUID).
	 * @return the post-processor
	 */
	public static RequestPostProcessor newIdempotencyKey() {
		return idempotencyKey(UUID.randomUUID().toString());
	}

}
