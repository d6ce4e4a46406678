package dev.idempo.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.store.LockingStore;
import dev.idempo.store.RecordState;
import dev.idempo.store.StoredRecord;
import dev.idempo.web.CallerScopeResolver;
import dev.idempo.web.DefaultCallerScopeResolver;
import dev.idempo.web.RequestFingerprint;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code idempo} Actuator endpoint: what the store holds for one caller scope and
 * idempotency key, and a way to evict a completed record (a support engineer unsticking a
 * client whose retries keep replaying a response that should run again).
 * <p>
 * A record belongs to a caller scope, which the {@link CallerScopeResolver} makes of the
 * request. Each operation takes the key and at most one of:
 * <ul>
 * <li>{@code principal}: the authenticated user's name, for the default resolver's
 * {@code principal:<name>};</li>
 * <li>{@code authorization}: the {@code Authorization} header's value as the client sent
 * it, hashed here exactly as the default resolver hashes it (the value is never stored,
 * logged or shown);</li>
 * <li>{@code scope}: the caller scope itself, as a custom resolver returns it, or as this
 * endpoint reports it;</li>
 * </ul>
 * none of them meaning the default resolver's {@code anonymous}. {@code principal} and
 * {@code authorization} are refused (400) when the application replaced the default
 * resolver, whose scopes they would not match.
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

	private final boolean defaultScopes;

	private final boolean showBody;

	/**
	 * Creates the endpoint for an application that uses the
	 * {@link DefaultCallerScopeResolver}.
	 * @param store the store
	 * @param showBody whether stored bodies are shown
	 */
	public IdempotencyEndpoint(LockingStore store, boolean showBody) {
		this(store, new DefaultCallerScopeResolver(), showBody);
	}

	/**
	 * Creates the endpoint.
	 * @param store the store
	 * @param callerScopeResolver the application's resolver: unless it is the
	 * {@link DefaultCallerScopeResolver} itself, only {@code scope} selects a caller
	 * @param showBody whether stored bodies are shown
	 */
	public IdempotencyEndpoint(LockingStore store, CallerScopeResolver callerScopeResolver, boolean showBody) {
		this.store = store;
		// a subclass may resolve differently, so only the class itself is trusted
		this.defaultScopes = callerScopeResolver.getClass() == DefaultCallerScopeResolver.class;
		this.showBody = showBody;
	}

	/**
	 * What the store holds for a key.
	 * @param key the idempotency key, as the client sent it (unquoted)
	 * @param scope the caller scope, or {@code null}
	 * @param principal the name of the authenticated caller, or {@code null}
	 * @param authorization the caller's {@code Authorization} header value, or
	 * {@code null}
	 * @return the state: {@code state} is {@code absent}, {@code in-flight} or
	 * {@code completed}; {@code scope} is the caller scope looked up
	 */
	@ReadOperation
	public Map<String, Object> record(String key, @Nullable String scope, @Nullable String principal,
			@Nullable String authorization) {
		String callerScope = callerScope(scope, principal, authorization);
		RecordState state = this.store.inspect(RequestFingerprint.storageKey(callerScope, key));
		Map<String, Object> report = new LinkedHashMap<>();
		report.put("state", state.isAbsent() ? "absent" : (state.record() != null) ? "completed" : "in-flight");
		report.put("inFlight", state.inFlight());
		report.put("scope", callerScope);
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
	 * What the store holds for a key of a caller scope.
	 * @param key the idempotency key, as the client sent it (unquoted)
	 * @param scope the caller scope, {@code anonymous} if {@code null}
	 * @return the state, as {@link #record(String, String, String, String)} reports it
	 */
	public Map<String, Object> record(String key, @Nullable String scope) {
		return record(key, scope, null, null);
	}

	/**
	 * Evicts the completed record of a key of a caller scope.
	 * @param key the idempotency key, as the client sent it (unquoted)
	 * @param scope the caller scope, {@code anonymous} if {@code null}
	 * @return {@code evicted}: whether a record was removed
	 */
	public Map<String, Object> evict(String key, @Nullable String scope) {
		return evict(key, scope, null, null);
	}

	/**
	 * Evicts the completed record of a key, so that the next request with it runs the
	 * handler; a request in flight keeps its claim.
	 * @param key the idempotency key, as the client sent it (unquoted)
	 * @param scope the caller scope, or {@code null}
	 * @param principal the name of the authenticated caller, or {@code null}
	 * @param authorization the caller's {@code Authorization} header value, or
	 * {@code null}
	 * @return {@code evicted}: whether a record was removed
	 */
	@DeleteOperation
	public Map<String, Object> evict(String key, @Nullable String scope, @Nullable String principal,
			@Nullable String authorization) {
		String callerScope = callerScope(scope, principal, authorization);
		return Map.of("evicted", this.store.evict(RequestFingerprint.storageKey(callerScope, key)), "scope",
				callerScope, "store", this.store.name());
	}

	private String callerScope(@Nullable String scope, @Nullable String principal, @Nullable String authorization) {
		int given = (hasText(scope) ? 1 : 0) + (hasText(principal) ? 1 : 0) + (hasText(authorization) ? 1 : 0);
		if (given > 1) {
			throw new InvalidEndpointRequestException(
					"Give at most one of scope, principal and authorization: each selects the caller on its own",
					"More than one caller selector");
		}
		if (hasText(scope)) {
			return scope;
		}
		if (!hasText(principal) && !hasText(authorization)) {
			return DefaultCallerScopeResolver.ANONYMOUS;
		}
		if (!this.defaultScopes) {
			throw new InvalidEndpointRequestException("The application declares its own CallerScopeResolver, "
					+ "whose scopes principal and authorization cannot derive: pass the scope it returns as scope",
					"Caller scope needed");
		}
		return hasText(principal) ? DefaultCallerScopeResolver.principalScope(principal)
				: DefaultCallerScopeResolver.authorizationScope(List.of(authorization));
	}

	private static boolean hasText(@Nullable String value) {
		return value != null && !value.isBlank();
	}

}
