package dev.idempo.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.RequestFingerprint;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.store.LockingStore;
import dev.idempo.store.RecordState;
import dev.idempo.store.StoredRecord;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code idempo} Actuator endpoint: what the store holds for one caller scope and
 * idempotency key, and a way to evict a completed record (a support engineer unsticking a
 * client whose retries keep replaying a response that should run again). The caller scope
 * is what the {@code CallerScopeResolver} makes of the request: by default
 * {@code principal:<name>} for an authenticated user, {@code authorization:<digest>} for
 * another {@code Authorization} header, else {@code anonymous}.
 * <p>
 * It reveals the stored response's status and headers, never its body unless
 * {@code idempo.endpoint.show-body} is set. Like every endpoint but health, it is not
 * exposed over the web unless {@code management.endpoints.web.exposure.include} lists it.
 *
 * @author idempo
 */
@Endpoint(id = "idempo")
public class IdempotencyEndpoint {

	private final LockingStore store;

	private final boolean showBody;

	/**
	 * Creates the endpoint.
	 * @param store the store
	 * @param showBody whether stored bodies are shown
	 */
	public IdempotencyEndpoint(LockingStore store, boolean showBody) {
		this.store = store;
		this.showBody = showBody;
	}

	/**
	 * What the store holds for a key.
	 * @param key the idempotency key, as the client sent it (unquoted)
	 * @param scope the caller scope, {@code anonymous} if not given
	 * @return the state: {@code state} is {@code absent}, {@code in-flight} or
	 * {@code completed}
	 */
	@ReadOperation
	public Map<String, Object> record(String key, @Nullable String scope) {
		RecordState state = this.store.inspect(storageKey(key, scope));
		Map<String, Object> report = new LinkedHashMap<>();
		report.put("state", state.isAbsent() ? "absent" : (state.record() != null) ? "completed" : "in-flight");
		report.put("inFlight", state.inFlight());
		StoredRecord record = state.record();
		if (record != null) {
			Instant expiresAt = state.expiresAt();
			if (expiresAt != null) {
				report.put("expiresAt", expiresAt.toString());
			}
			report.put("fingerprint", record.fingerprint());
			report.put("storedBytes", record.response().length);
			try {
				CapturedResponse response = ResponseEnvelope.decode(record.response());
				report.put("status", response.status());
				report.put("headers", response.headers());
				report.put("bodyBytes", response.body().length);
				if (this.showBody) {
					report.put("body", new String(response.body(), StandardCharsets.UTF_8));
				}
			}
			catch (IllegalArgumentException ex) {
				report.put("unreadable", ex.getMessage());
			}
		}
		report.put("store", this.store.name());
		return report;
	}

	/**
	 * Evicts the completed record of a key, so that the next request with it runs the
	 * handler; a request in flight keeps its claim.
	 * @param key the idempotency key, as the client sent it (unquoted)
	 * @param scope the caller scope, {@code anonymous} if not given
	 * @return {@code evicted}: whether a record was removed
	 */
	@DeleteOperation
	public Map<String, Object> evict(String key, @Nullable String scope) {
		return Map.of("evicted", this.store.evict(storageKey(key, scope)), "store", this.store.name());
	}

	private static String storageKey(String key, @Nullable String scope) {
		return RequestFingerprint.storageKey((scope != null && !scope.isBlank()) ? scope : "anonymous", key);
	}

}
