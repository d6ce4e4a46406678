package dev.idempo.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.CallerScopes;
import dev.idempo.core.CapturedResponse;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.core.StorageKeys;
import dev.idempo.store.LockingStore;
import dev.idempo.store.RecordState;
import dev.idempo.store.StoredRecord;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code idempo} Actuator endpoint: what the store holds for one caller scope and
 * idempotency key, and a way to evict a completed record (a support engineer unsticking a
 * client whose retries keep replaying a response that should run again).
 * <p>
 * A record belongs to a caller scope: the one the application's caller scope resolver
 * ({@code CallerScopeResolver} on Spring MVC, {@code ReactiveCallerScopeResolver} on
 * WebFlux) makes of a request, or an {@code @Idempotent} method's or the template's. Each
 * operation takes the key and at most one of:
 * <ul>
 * <li>{@code principal}: the authenticated user's name, for the default resolvers'
 * {@code principal:<name>};</li>
 * <li>{@code authorization}: the {@code Authorization} header's value as the client sent
 * it, hashed here exactly as the default resolvers hash it (the value is never stored,
 * logged or shown);</li>
 * <li>{@code scope}: the caller scope itself, as a custom resolver returns it, as a
 * method's or the template's records have it, or as this endpoint reports it;</li>
 * </ul>
 * none of them meaning the default resolvers' {@code anonymous}. {@code principal} and
 * {@code authorization} are refused (400) when the application replaced a default
 * resolver, whose scopes they would not match.
 * <p>
 * It needs no web stack, so it is the same on Spring MVC, on WebFlux and in an
 * application without a web server (over JMX there). Its operations call the blocking
 * {@link LockingStore}, as Actuator allows: on WebFlux, Actuator invokes an operation
 * that returns no {@code Mono} on a {@code boundedElastic} thread, never on the event
 * loop.
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
	 * Creates the endpoint for an application whose requests idempo's default resolvers
	 * scope, or that serves no web requests.
	 * @param store the store
	 * @param showBody whether stored bodies are shown
	 */
	public IdempotencyEndpoint(LockingStore store, boolean showBody) {
		this(store, true, showBody);
	}

	/**
	 * Creates the endpoint.
	 * @param store the store
	 * @param defaultScopes whether the application's requests are scoped as idempo's
	 * default resolvers scope them ({@link CallerScopes}): if not, {@code principal} and
	 * {@code authorization} are refused and only {@code scope} selects a caller
	 * @param showBody whether stored bodies are shown
	 */
	public IdempotencyEndpoint(LockingStore store, boolean defaultScopes, boolean showBody) {
		this.store = store;
		this.defaultScopes = defaultScopes;
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
		RecordState state = this.store.inspect(StorageKeys.of(callerScope, key));
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
		return Map.of("evicted", this.store.evict(StorageKeys.of(callerScope, key)), "scope", callerScope, "store",
				this.store.name());
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
			return CallerScopes.ANONYMOUS;
		}
		if (!this.defaultScopes) {
			throw new InvalidEndpointRequestException("The application declares its own CallerScopeResolver "
					+ "(or ReactiveCallerScopeResolver), whose scopes principal and authorization cannot derive: "
					+ "pass the scope it returns as scope", "Caller scope needed");
		}
		return hasText(principal) ? CallerScopes.principal(principal)
				: CallerScopes.authorization(List.of(authorization));
	}

	private static boolean hasText(@Nullable String value) {
		return value != null && !value.isBlank();
	}

}
