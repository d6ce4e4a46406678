package dev.idempo.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.idempo.core.IdempotencySettings;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties for idempo ({@code idempo.*}): the switch, the key headers,
 * TTLs and size limits that every entry point shares, with the concerns of the request
 * flow bound beneath them ({@link ResponseStorageProperties idempo.responses},
 * {@link FingerprintProperties idempo.fingerprint}, {@link ConflictProperties
 * idempo.conflict}, {@link StoreFailureProperties idempo.store-failure} and
 * {@link RouteProperties idempo.routes}). A technology's own settings have a class of
 * their own beside its auto-configuration ({@code idempo.store.redis},
 * {@code idempo.method}, {@code idempo.endpoint}, ...). Checked when bound: a value out
 * of range fails start-up naming the property.
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
	 * WebFlux: how long a request body that streams to its handler (declared
	 * Content-Length, the key already claimed) may go without a byte arriving while it is
	 * read. Then the body fails with 408 Request Timeout, the key is released and nothing
	 * is stored, so that a client gone silent mid-body, its connection still open, does
	 * not hold its key (Reactor Netty has no read timeout of its own). Time counts only
	 * while the handler asks for bytes. Spring MVC relies on the container's read timeout
	 * instead. Positive.
	 */
	private Duration requestBodyTimeout = Duration.ofSeconds(60);

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

	/**
	 * Which responses are stored and replayed.
	 */
	@NestedConfigurationProperty
	private final ResponseStorageProperties responses = new ResponseStorageProperties();

	/**
	 * What a request's fingerprint covers.
	 */
	@NestedConfigurationProperty
	private final FingerprintProperties fingerprint = new FingerprintProperties();

	/**
	 * What a duplicate gets while the first request with its key still runs.
	 */
	@NestedConfigurationProperty
	private final ConflictProperties conflict = new ConflictProperties();

	/**
	 * What happens when the store cannot be reached.
	 */
	@NestedConfigurationProperty
	private final StoreFailureProperties storeFailure = new StoreFailureProperties();

	private final Store store = new Store();

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
	private List<RouteProperties> routes = new ArrayList<>();

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

	public Duration getRequestBodyTimeout() {
		return this.requestBodyTimeout;
	}

	public void setRequestBodyTimeout(Duration requestBodyTimeout) {
		this.requestBodyTimeout = requestBodyTimeout;
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

	public ResponseStorageProperties getResponses() {
		return this.responses;
	}

	public FingerprintProperties getFingerprint() {
		return this.fingerprint;
	}

	public ConflictProperties getConflict() {
		return this.conflict;
	}

	public StoreFailureProperties getStoreFailure() {
		return this.storeFailure;
	}

	public Store getStore() {
		return this.store;
	}

	public List<RouteProperties> getRoutes() {
		return this.routes;
	}

	public void setRoutes(List<RouteProperties> routes) {
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
		if (properties.getRequestBodyTimeout().isNegative() || properties.getRequestBodyTimeout().isZero()) {
			errors.rejectValue("requestBodyTimeout", "idempo.request-body-timeout",
					"must be positive (a client silent mid-body would otherwise hold its key)");
		}
		DataSize maxBufferedSize = properties.getMaxBufferedSize();
		if (maxBufferedSize != null && maxBufferedSize.toBytes() <= 0) {
			errors.rejectValue("maxBufferedSize", "idempo.max-buffered-size",
					"must be positive (leave it unset for a quarter of the maximum heap)");
		}
		properties.getConflict().validate(errors);
		properties.getStoreFailure().validate(errors);
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

	static void rejectInvalidTtl(Errors errors, String field, String property, Duration ttl) {
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
