package dev.idempo.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.method.IdempotentMethodAdvisor;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties for idempo. Checked when bound: a value out of range fails
 * start-up naming the property.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo")
public class IdempotencyProperties implements Validator {

	/** An HTTP header name: an RFC 9110 token. */
	public static final String HEADER_NAME = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";

	/**
	 * Headers that a replay must not be marked with: they describe the response itself.
	 */
	private static final Set<String> RESERVED_REPLAYED_HEADERS = Set.of("content-length", "content-type",
			"content-encoding", "transfer-encoding", "connection", "set-cookie", "retry-after", "location", "date",
			"vary", "etag", "cache-control");

	/**
	 * Whether idempotency keys are handled. When false, @Idempotent handlers run as if
	 * unannotated.
	 */
	private boolean enabled = true;

	/**
	 * Name of the request header that carries the idempotency key (an HTTP header name).
	 */
	private String keyHeader = "Idempotency-Key";

	/**
	 * Further request headers accepted as the key header. Sending more than one key
	 * header is rejected with 400.
	 */
	private List<String> keyHeaderAliases = new ArrayList<>(List.of("X-Idempotency-Key"));

	/**
	 * Whether every @Idempotent handler rejects requests without a key with 400, as if
	 * each said required = true.
	 */
	private boolean keyRequired;

	/**
	 * How long a completed response is kept and replayed, unless @Idempotent(ttl) says
	 * otherwise. Positive, at most 36500d (100 years).
	 */
	private Duration responseTtl = Duration.ofHours(24);

	/**
	 * How long a claim survives without renewal on stores whose claims are leases
	 * (memory, Redis). Renewed about every third of this while the handler runs.
	 * Positive, at most 36500d.
	 */
	private Duration lockTtl = Duration.ofSeconds(30);

	/**
	 * Largest response body that is stored. Larger responses are sent unchanged but not
	 * stored, and the key is released. Not negative; 0 stores only responses without a
	 * body.
	 */
	private DataSize maxResponseSize = DataSize.ofMegabytes(1);

	/**
	 * Largest request body of a protected request with a key: a declared Content-Length
	 * above it gets 413 before the key is claimed, as does a body held whole to
	 * fingerprint it (chunked, ignored JSON fields, transactional, a custom fingerprint
	 * strategy) that grows beyond it. Bodies of declared length otherwise stream to the
	 * handler and are never held. Form and multipart bodies are read by the container
	 * instead and are not limited by this. Not negative.
	 */
	private DataSize maxRequestSize = DataSize.ofMegabytes(10);

	/**
	 * Most bytes idempo holds in memory at once, across all requests of this instance:
	 * request bodies held whole for fingerprints (those that cannot stream: chunked,
	 * ignored JSON fields, transactional, a custom fingerprint strategy) and responses
	 * held until they are stored. A keyed request whose held body would exceed it gets
	 * 503 before its body is held; a response that would exceed it is sent as written and
	 * not stored. Positive; unset: a quarter of the maximum heap.
	 */
	private @Nullable DataSize maxBufferedSize;

	/**
	 * Response headers that are neither stored nor replayed (case-insensitive).
	 * Content-Length, Transfer-Encoding and Connection are always excluded.
	 */
	private List<String> excludedHeaders = new ArrayList<>(IdempotencySettings.DEFAULT_EXCLUDED_HEADERS);

	/**
	 * Order of the servlet filter that buffers protected requests and responses (Spring
	 * MVC), or of the web filter that runs the request flow (WebFlux).
	 */
	private int filterOrder = 0;

	/**
	 * Whether every @Idempotent handler and method runs in one transaction with its
	 * record, as with @Idempotent(transactional = true). Only with the postgres and mysql
	 * stores.
	 */
	private boolean transactional;

	/**
	 * Response header added with the value "true" to a replayed response (an HTTP header
	 * name).
	 */
	private String replayedHeader = IdempotencySettings.DEFAULT_REPLAYED_HEADER;

	private final Responses responses = new Responses();

	private final Fingerprint fingerprint = new Fingerprint();

	private final Conflict conflict = new Conflict();

	private final StoreFailure storeFailure = new StoreFailure();

	private final Store store = new Store();

	private final Endpoint endpoint = new Endpoint();

	private final Method method = new Method();

	/**
	 * Routes protected without @Idempotent: functional endpoints (RouterFunction),
	 * gateway routes and handler methods that carry no @Idempotent. Each entry: path (a
	 * Spring PathPattern such as /payments/**, required), methods (some of POST, PATCH,
	 * PUT and DELETE, by default all four; GET, HEAD, OPTIONS and TRACE fail the
	 * start-up), ttl (by default idempo.response-ttl), required (false) and
	 * cache-response (true), as @Idempotent's attributes. The first entry that matches a
	 * request's path and method applies; @Idempotent on a handler wins over every entry.
	 * None by default.
	 */
	private List<Route> routes = new ArrayList<>();

	public @Nullable DataSize getMaxBufferedSize() {
		return this.maxBufferedSize;
	}

	public void setMaxBufferedSize(@Nullable DataSize maxBufferedSize) {
		this.maxBufferedSize = maxBufferedSize;
	}

	/**
	 * The bytes of request bodies held at once: {@link #getMaxBufferedSize()}, else a
	 * quarter of the maximum heap.
	 * @return the budget in bytes
	 */
	public long maxBufferedBytes() {
		return (this.maxBufferedSize != null) ? this.maxBufferedSize.toBytes() : Runtime.getRuntime().maxMemory() / 4;
	}

	public boolean isTransactional() {
		return this.transactional;
	}

	public void setTransactional(boolean transactional) {
		this.transactional = transactional;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyHeader() {
		return this.keyHeader;
	}

	public void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	public List<String> getKeyHeaderAliases() {
		return this.keyHeaderAliases;
	}

	public void setKeyHeaderAliases(List<String> keyHeaderAliases) {
		this.keyHeaderAliases = keyHeaderAliases;
	}

	public boolean isKeyRequired() {
		return this.keyRequired;
	}

	public void setKeyRequired(boolean keyRequired) {
		this.keyRequired = keyRequired;
	}

	public Duration getResponseTtl() {
		return this.responseTtl;
	}

	public void setResponseTtl(Duration responseTtl) {
		this.responseTtl = responseTtl;
	}

	public Duration getLockTtl() {
		return this.lockTtl;
	}

	public void setLockTtl(Duration lockTtl) {
		this.lockTtl = lockTtl;
	}

	public DataSize getMaxResponseSize() {
		return this.maxResponseSize;
	}

	public void setMaxResponseSize(DataSize maxResponseSize) {
		this.maxResponseSize = maxResponseSize;
	}

	public DataSize getMaxRequestSize() {
		return this.maxRequestSize;
	}

	public void setMaxRequestSize(DataSize maxRequestSize) {
		this.maxRequestSize = maxRequestSize;
	}

	public List<String> getExcludedHeaders() {
		return this.excludedHeaders;
	}

	public void setExcludedHeaders(List<String> excludedHeaders) {
		this.excludedHeaders = excludedHeaders;
	}

	public int getFilterOrder() {
		return this.filterOrder;
	}

	public void setFilterOrder(int filterOrder) {
		this.filterOrder = filterOrder;
	}

	public String getReplayedHeader() {
		return this.replayedHeader;
	}

	public void setReplayedHeader(String replayedHeader) {
		this.replayedHeader = replayedHeader;
	}

	public Responses getResponses() {
		return this.responses;
	}

	public Fingerprint getFingerprint() {
		return this.fingerprint;
	}

	public Conflict getConflict() {
		return this.conflict;
	}

	public StoreFailure getStoreFailure() {
		return this.storeFailure;
	}

	public Store getStore() {
		return this.store;
	}

	public Endpoint getEndpoint() {
		return this.endpoint;
	}

	public Method getMethod() {
		return this.method;
	}

	public List<Route> getRoutes() {
		return this.routes;
	}

	public void setRoutes(List<Route> routes) {
		this.routes = routes;
	}

	@Override
	public boolean supports(Class<?> type) {
		return IdempotencyProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		IdempotencyProperties properties = (IdempotencyProperties) target;
		validateHeaders(properties, errors);
		properties.getResponses().validate(errors, "responses", "idempo.responses");
		properties.getFingerprint().validate(errors, "fingerprint", "idempo.fingerprint");
		rejectInvalidTtl(errors, "responseTtl", "idempo.response-ttl", properties.getResponseTtl());
		rejectInvalidTtl(errors, "lockTtl", "idempo.lock-ttl", properties.getLockTtl());
		if (properties.getMaxResponseSize().isNegative()) {
			errors.rejectValue("maxResponseSize", "idempo.max-response-size",
					"must not be negative (0 stores only responses without a body)");
		}
		if (properties.getMaxRequestSize().isNegative()) {
			errors.rejectValue("maxRequestSize", "idempo.max-request-size", "must not be negative");
		}
		DataSize maxBufferedSize = properties.getMaxBufferedSize();
		if (maxBufferedSize != null && maxBufferedSize.toBytes() <= 0) {
			errors.rejectValue("maxBufferedSize", "idempo.max-buffered-size",
					"must be positive (leave it unset for a quarter of the maximum heap)");
		}
		rejectNegative(errors, "conflict.retryAfter", "idempo.conflict.retry-after",
				properties.getConflict().getRetryAfter());
		rejectNegative(errors, "conflict.waitTimeout", "idempo.conflict.wait-timeout",
				properties.getConflict().getWaitTimeout());
		rejectNegative(errors, "storeFailure.retryAfter", "idempo.store-failure.retry-after",
				properties.getStoreFailure().getRetryAfter());
		for (int i = 0; i < properties.getRoutes().size(); i++) {
			properties.getRoutes().get(i).validate(errors, i);
		}
	}

	private static void validateHeaders(IdempotencyProperties properties, Errors errors) {
		if (!properties.getKeyHeader().matches(HEADER_NAME)) {
			errors.rejectValue("keyHeader", "idempo.key-header", "must be an HTTP header name (a token)");
		}
		for (String alias : properties.getKeyHeaderAliases()) {
			if (!alias.trim().matches(HEADER_NAME)) {
				errors.rejectValue("keyHeaderAliases", "idempo.key-header-aliases",
						"'" + alias + "' is not an HTTP header name (a token)");
			}
		}
		if (!properties.getReplayedHeader().matches(HEADER_NAME)) {
			errors.rejectValue("replayedHeader", "idempo.replayed-header", "must be an HTTP header name (a token)");
		}
		else if (RESERVED_REPLAYED_HEADERS.contains(properties.getReplayedHeader().toLowerCase(Locale.ROOT))
				|| properties.getReplayedHeader().equalsIgnoreCase(properties.getKeyHeader())) {
			errors.rejectValue("replayedHeader", "idempo.replayed-header", "'" + properties.getReplayedHeader()
					+ "' is a header that a response or the key already uses: name a header of its own");
		}
	}

	private static void rejectInvalidTtl(Errors errors, String field, String property, Duration ttl) {
		if (!IdempotencySettings.isValidTtl(ttl)) {
			errors.rejectValue(field, property, "must be positive and at most 36500d (100 years)");
		}
	}

	static void rejectNegative(Errors errors, String field, String property, Duration duration) {
		if (duration.isNegative()) {
			errors.rejectValue(field, property, "must not be negative");
		}
	}

	/**
	 * Idempotent methods outside the web layer (@Idempotent with a key) and the
	 * IdempotencyTemplate.
	 */
	public static class Method {

		/**
		 * Whether a key used again with other arguments throws
		 * IdempotencyKeyReusedException instead of returning the result stored for the
		 * first arguments (compared as a digest of their JSON; infrastructure arguments
		 * such as a Kafka Acknowledgment are left out).
		 */
		private boolean verifyArguments = true;

		/**
		 * Order of the advisor of @Idempotent methods; by default before @Transactional
		 * and Spring Retry's @Retryable, which then run inside the claim.
		 */
		private int advisorOrder = IdempotentMethodAdvisor.DEFAULT_ORDER;

		public boolean isVerifyArguments() {
			return this.verifyArguments;
		}

		public void setVerifyArguments(boolean verifyArguments) {
			this.verifyArguments = verifyArguments;
		}

		public int getAdvisorOrder() {
			return this.advisorOrder;
		}

		public void setAdvisorOrder(int advisorOrder) {
			this.advisorOrder = advisorOrder;
		}

	}

	/**
	 * A route protected by configuration: the requests whose path matches its pattern and
	 * whose method is one of its methods, with the settings of @Idempotent's attributes.
	 */
	public static class Route {

		/**
		 * Spring PathPattern of the paths it protects, matched against the path within
		 * the application, such as /payments/**.
		 */
		private @Nullable String path;

		/**
		 * Request methods it protects: some of POST, PATCH, PUT and DELETE (GET, HEAD,
		 * OPTIONS and TRACE never take part).
		 */
		private List<String> methods = new ArrayList<>(List.of("POST", "PATCH", "PUT", "DELETE"));

		/**
		 * How long its responses are kept, as @Idempotent(ttl). By default
		 * idempo.response-ttl.
		 */
		private @Nullable Duration ttl;

		/**
		 * Whether a request without a key gets 400, as @Idempotent(required).
		 */
		private boolean required;

		/**
		 * Whether its responses are stored and replayed, as @Idempotent(cacheResponse);
		 * false only keeps duplicates from running at the same time.
		 */
		private boolean cacheResponse = true;

		/**
		 * Which statuses its responses are stored for, in place of idempo.responses (what
		 * the entry leaves out takes idempo.responses' defaults).
		 */
		private @Nullable Responses responses;

		/**
		 * What its fingerprints cover, in place of idempo.fingerprint.
		 */
		private @Nullable Fingerprint fingerprint;

		public @Nullable String getPath() {
			return this.path;
		}

		public void setPath(@Nullable String path) {
			this.path = path;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public void setMethods(List<String> methods) {
			this.methods = methods;
		}

		public @Nullable Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(@Nullable Duration ttl) {
			this.ttl = ttl;
		}

		public boolean isRequired() {
			return this.required;
		}

		public void setRequired(boolean required) {
			this.required = required;
		}

		public boolean isCacheResponse() {
			return this.cacheResponse;
		}

		public void setCacheResponse(boolean cacheResponse) {
			this.cacheResponse = cacheResponse;
		}

		public @Nullable Responses getResponses() {
			return this.responses;
		}

		public void setResponses(@Nullable Responses responses) {
			this.responses = responses;
		}

		public @Nullable Fingerprint getFingerprint() {
			return this.fingerprint;
		}

		public void setFingerprint(@Nullable Fingerprint fingerprint) {
			this.fingerprint = fingerprint;
		}

		void validate(Errors errors, int index) {
			String field = "routes[" + index + "].";
			String property = "idempo.routes[" + index + "].";
			String pathProblem = RoutePatterns.problem(this.path);
			if (pathProblem != null) {
				errors.rejectValue(field + "path", property + "path", pathProblem);
			}
			if (this.methods.isEmpty()) {
				errors.rejectValue(field + "methods", property + "methods",
						"must name at least one of POST, PATCH, PUT and DELETE");
			}
			for (String method : this.methods) {
				String methodProblem = RoutePatterns.methodProblem(method);
				if (methodProblem != null) {
					errors.rejectValue(field + "methods", property + "methods", methodProblem);
				}
			}
			if (this.ttl != null) {
				rejectInvalidTtl(errors, field + "ttl", property + "ttl", this.ttl);
			}
			if (this.responses != null) {
				this.responses.validate(errors, field + "responses", property + "responses");
			}
			if (this.fingerprint != null) {
				this.fingerprint.validate(errors, field + "fingerprint", property + "fingerprint");
			}
		}

	}

	/**
	 * The idempo Actuator endpoint.
	 */
	public static class Endpoint {

		/**
		 * Whether the idempo Actuator endpoint shows the bodies of stored responses (they
		 * may hold personal data); by default only status and headers.
		 */
		private boolean showBody;

		public boolean isShowBody() {
			return this.showBody;
		}

		public void setShowBody(boolean showBody) {
			this.showBody = showBody;
		}

	}

	/**
	 * The settings of the request flow these properties describe.
	 * @return the settings
	 */
	public IdempotencySettings toSettings() {
		return new IdempotencySettings(this.keyHeader, this.keyHeaderAliases, this.keyRequired, this.responseTtl,
				this.lockTtl, this.maxResponseSize.toBytes(), this.maxRequestSize.toBytes(),
				java.util.Set.copyOf(this.excludedHeaders), this.conflict.getRetryAfter(),
				this.conflict.getWaitTimeout(), this.storeFailure.getMode() == StoreFailureMode.FAIL_OPEN,
				this.storeFailure.getRetryAfter(), this.replayedHeader);
	}

	/**
	 * Which responses are stored and replayed; the rest release their key, so that a
	 * retry runs the handler again.
	 */
	public static class Responses {

		/**
		 * Statuses whose responses are stored and replayed: codes (201) or classes (4xx).
		 * 5xx may be added: a stored 500 is replayed like any other response.
		 */
		private List<String> stored = new ArrayList<>(ResponseStoragePolicy.DEFAULT_STORED);

		/**
		 * Statuses never stored even when "stored" matches them: codes (429) or classes;
		 * their responses release the key.
		 */
		private List<String> notStored = new ArrayList<>(ResponseStoragePolicy.DEFAULT_NOT_STORED);

		public List<String> getStored() {
			return this.stored;
		}

		public void setStored(List<String> stored) {
			this.stored = stored;
		}

		public List<String> getNotStored() {
			return this.notStored;
		}

		public void setNotStored(List<String> notStored) {
			this.notStored = notStored;
		}

		/**
		 * Rejects entries that are neither a status code nor a class.
		 * @param errors the errors of the bound object
		 * @param field the path of this object in it, such as {@code responses}
		 * @param property the property prefix, such as {@code idempo.responses}
		 */
		void validate(Errors errors, String field, String property) {
			rejectInvalidEntries(errors, field + ".stored", property + ".stored", this.stored);
			rejectInvalidEntries(errors, field + ".notStored", property + ".not-stored", this.notStored);
		}

		private static void rejectInvalidEntries(Errors errors, String field, String property, List<String> entries) {
			for (String entry : entries) {
				String problem = ResponseStoragePolicy.problem(entry);
				if (problem != null) {
					errors.rejectValue(field, property, problem);
				}
			}
		}

		/**
		 * The policy these properties describe.
		 * @return the policy
		 */
		public ResponseStoragePolicy toPolicy() {
			return ResponseStoragePolicy.of(this.stored, this.notStored);
		}

	}

	/**
	 * What a request's fingerprint covers beyond its method, path, query and body.
	 */
	public static class Fingerprint {

		/**
		 * JSON Pointers (RFC 6901) of fields left out of the fingerprint of a JSON body
		 * (application/json, application/*+json), such as /timestamp or /meta/requestId:
		 * a retry that differs only there replays instead of getting 422. What remains is
		 * fingerprinted in a canonical form (members sorted, whitespace ignored); bodies
		 * that are not JSON or do not parse are fingerprinted as sent.
		 */
		private List<String> ignoredFields = new ArrayList<>();

		/**
		 * Request headers whose values are part of the fingerprint (case-insensitive); a
		 * header that is absent differs from one sent empty.
		 */
		private List<String> headers = new ArrayList<>();

		public List<String> getIgnoredFields() {
			return this.ignoredFields;
		}

		public void setIgnoredFields(List<String> ignoredFields) {
			this.ignoredFields = ignoredFields;
		}

		public List<String> getHeaders() {
			return this.headers;
		}

		public void setHeaders(List<String> headers) {
			this.headers = headers;
		}

		/**
		 * Rejects invalid JSON Pointers and header names.
		 * @param errors the errors of the bound object
		 * @param field the path of this object in it, such as {@code fingerprint}
		 * @param property the property prefix, such as {@code idempo.fingerprint}
		 */
		void validate(Errors errors, String field, String property) {
			for (String pointer : this.ignoredFields) {
				String problem = FingerprintOptions.pointerProblem(pointer);
				if (problem != null) {
					errors.rejectValue(field + ".ignoredFields", property + ".ignored-fields", problem);
				}
			}
			for (String header : this.headers) {
				if (!header.trim().matches(HEADER_NAME)) {
					errors.rejectValue(field + ".headers", property + ".headers",
							"'" + header + "' is not an HTTP header name (a token)");
				}
			}
		}

		/**
		 * The options these properties describe.
		 * @return the options
		 */
		public FingerprintOptions toOptions() {
			return FingerprintOptions.of(this.ignoredFields, this.headers);
		}

	}

	/**
	 * What a duplicate gets while the first request with its key still runs.
	 */
	public static class Conflict {

		/**
		 * Retry-After sent with 409, rounded up to whole seconds. Not negative.
		 */
		private Duration retryAfter = Duration.ofSeconds(1);

		/**
		 * How long a duplicate waits for the first request to finish before getting 409.
		 * When it finishes in time, the duplicate gets its response replayed. Zero
		 * answers 409 at once; not negative. A waiting duplicate holds a request thread.
		 */
		private Duration waitTimeout = Duration.ZERO;

		public Duration getRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
		}

		public Duration getWaitTimeout() {
			return this.waitTimeout;
		}

		public void setWaitTimeout(Duration waitTimeout) {
			this.waitTimeout = waitTimeout;
		}

	}

	/**
	 * What happens when the store cannot be reached.
	 */
	public static class StoreFailure {

		/**
		 * Whether to refuse the request with 503 (fail-closed) or run the handler
		 * unprotected (fail-open).
		 */
		private StoreFailureMode mode = StoreFailureMode.FAIL_CLOSED;

		/**
		 * Retry-After sent with 503, rounded up to whole seconds. Not negative.
		 */
		private Duration retryAfter = Duration.ofSeconds(5);

		public StoreFailureMode getMode() {
			return this.mode;
		}

		public void setMode(StoreFailureMode mode) {
			this.mode = mode;
		}

		public Duration getRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
		}

	}

	/**
	 * Store settings.
	 */
	public static class Store {

		/**
		 * Which store claims keys and keeps responses.
		 */
		private StoreType type = StoreType.MEMORY;

		public StoreType getType() {
			return this.type;
		}

		public void setType(StoreType type) {
			this.type = type;
		}

	}

	/**
	 * The stores idempo ships.
	 */
	public enum StoreType {

		/** In this JVM only. */
		MEMORY,

		/** Redis, through Spring Data Redis. */
		REDIS,

		/** PostgreSQL, through Spring JDBC. */
		POSTGRES,

		/** MySQL or MariaDB, through Spring JDBC. */
		MYSQL

	}

	/**
	 * What to do when the store fails.
	 */
	public enum StoreFailureMode {

		/** Refuse the request with 503; the handler does not run. */
		FAIL_CLOSED,

		/** Run the handler without protection; logged and counted. */
		FAIL_OPEN

	}

}
