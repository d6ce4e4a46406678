package dev.idempo.autoconfigure.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.client.IdempotencyClientSettings;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.http.HttpMethod;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of idempo's client interceptor and {@code WebClient} filter
 * ({@code idempo.client.*}). Apart from {@link IdempotencyProperties} because the client
 * serves applications without a web server too. Checked when bound: a value out of range
 * fails start-up naming the property.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.client")
public class IdempotencyClientProperties implements Validator {

	private static final Set<String> KEYABLE_METHODS = Set.of("POST", "PUT", "PATCH", "DELETE");

	/**
	 * Whether RestClient, RestTemplate and WebClient instances built from Spring Boot's
	 * builders send idempotency keys and retry what they make safe to retry.
	 */
	private boolean enabled;

	/**
	 * Request methods that get an idempotency key when the caller set none: any of POST,
	 * PUT, PATCH and DELETE.
	 */
	private List<String> methods = new ArrayList<>(List.of("POST", "PATCH"));

	/**
	 * Name of the request header that carries the key.
	 */
	private String keyHeader = "Idempotency-Key";

	/**
	 * Attempts of a call in all, the first included. 1 sends keys but never retries.
	 */
	private int maxAttempts = 3;

	/**
	 * Longest Retry-After that is waited for; a server asking for more gets its retry
	 * after this long.
	 */
	private Duration maxRetryAfter = Duration.ofSeconds(10);

	/**
	 * Whether a call made while an idempotent request or method runs on the same thread
	 * gets a key derived from that execution and the call's method, URI and order, so
	 * that a re-run after a crash sends the same keys. When false, such calls get random
	 * keys like any other.
	 */
	private boolean derivedKeys = true;

	private final Backoff backoff = new Backoff();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public List<String> getMethods() {
		return this.methods;
	}

	public void setMethods(List<String> methods) {
		this.methods = methods;
	}

	public String getKeyHeader() {
		return this.keyHeader;
	}

	public void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	public int getMaxAttempts() {
		return this.maxAttempts;
	}

	public void setMaxAttempts(int maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	public Duration getMaxRetryAfter() {
		return this.maxRetryAfter;
	}

	public void setMaxRetryAfter(Duration maxRetryAfter) {
		this.maxRetryAfter = maxRetryAfter;
	}

	public boolean isDerivedKeys() {
		return this.derivedKeys;
	}

	public void setDerivedKeys(boolean derivedKeys) {
		this.derivedKeys = derivedKeys;
	}

	public Backoff getBackoff() {
		return this.backoff;
	}

	/**
	 * The settings of the interceptor these properties describe.
	 * @return the settings
	 */
	public IdempotencyClientSettings toSettings() {
		Set<HttpMethod> keyed = new LinkedHashSet<>();
		this.methods.forEach((method) -> keyed.add(HttpMethod.valueOf(method.trim().toUpperCase(Locale.ROOT))));
		return new IdempotencyClientSettings(keyed, this.keyHeader, this.maxAttempts, this.backoff.getInitial(),
				this.backoff.getMax(), this.backoff.getMultiplier(), this.backoff.getJitter(), this.maxRetryAfter,
				this.derivedKeys);
	}

	@Override
	public boolean supports(Class<?> type) {
		return IdempotencyClientProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		IdempotencyClientProperties properties = (IdempotencyClientProperties) target;
		for (String method : properties.getMethods()) {
			if (!KEYABLE_METHODS.contains(method.trim().toUpperCase(Locale.ROOT))) {
				errors.rejectValue("methods", "idempo.client.methods", "'" + method
						+ "' is not a method that takes an idempotency key; use POST, PUT, PATCH or DELETE");
			}
		}
		if (!properties.getKeyHeader().matches(IdempotencyProperties.HEADER_NAME)) {
			errors.rejectValue("keyHeader", "idempo.client.key-header", "must be an HTTP header name (a token)");
		}
		if (properties.getMaxAttempts() < 1) {
			errors.rejectValue("maxAttempts", "idempo.client.max-attempts",
					"must be at least 1 (1 sends keys and never retries)");
		}
		if (properties.getMaxRetryAfter().isNegative()) {
			errors.rejectValue("maxRetryAfter", "idempo.client.max-retry-after", "must not be negative");
		}
		Backoff backoff = properties.getBackoff();
		if (backoff.getInitial().isNegative()) {
			errors.rejectValue("backoff.initial", "idempo.client.backoff.initial", "must not be negative");
		}
		if (backoff.getMax().compareTo(backoff.getInitial()) < 0) {
			errors.rejectValue("backoff.max", "idempo.client.backoff.max",
					"must not be shorter than idempo.client.backoff.initial (" + backoff.getInitial() + ")");
		}
		if (!(backoff.getMultiplier() >= 1.0)) {
			errors.rejectValue("backoff.multiplier", "idempo.client.backoff.multiplier", "must be at least 1");
		}
		if (!(backoff.getJitter() >= 0.0 && backoff.getJitter() <= 1.0)) {
			errors.rejectValue("backoff.jitter", "idempo.client.backoff.jitter",
					"must be between 0 (no jitter) and 1 (each wait anywhere from zero to its full length)");
		}
	}

	/**
	 * The waits between attempts when the answer gives no Retry-After.
	 */
	public static class Backoff {

		/**
		 * Wait before the first retry.
		 */
		private Duration initial = Duration.ofMillis(200);

		/**
		 * Longest wait between two attempts.
		 */
		private Duration max = Duration.ofSeconds(5);

		/**
		 * Factor by which each wait grows over the one before, at least 1.
		 */
		private double multiplier = 2.0;

		/**
		 * Share of each wait that is random, from 0 (none) to 1 (anywhere from zero to
		 * the full wait), so that clients cut off together do not retry together.
		 */
		private double jitter = 0.5;

		public Duration getInitial() {
			return this.initial;
		}

		public void setInitial(Duration initial) {
			this.initial = initial;
		}

		public Duration getMax() {
			return this.max;
		}

		public void setMax(Duration max) {
			this.max = max;
		}

		public double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(double multiplier) {
			this.multiplier = multiplier;
		}

		public double getJitter() {
			return this.jitter;
		}

		public void setJitter(double jitter) {
			this.jitter = jitter;
		}

	}

}
