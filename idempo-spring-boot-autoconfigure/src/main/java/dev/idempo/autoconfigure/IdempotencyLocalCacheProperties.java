package dev.idempo.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of the local replay cache ({@code idempo.local-cache.*}): a
 * bounded Caffeine cache, in each instance, of the completed records it stored or
 * replayed. Checked when bound: a value out of range fails start-up naming the property.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.local-cache")
public class IdempotencyLocalCacheProperties implements Validator {

	/**
	 * Whether completed records this instance stored or replayed are kept in a local
	 * cache, so that replaying them again costs no store round trip. Needs
	 * com.github.ben-manes.caffeine:caffeine on the class path.
	 */
	private boolean enabled;

	/**
	 * Most records the local cache keeps; the least used are dropped first (their keys
	 * are then answered by the store again). At least 1.
	 */
	private long maximumSize = 10_000;

	/**
	 * Longest time a record stays in the local cache, whatever its remaining time to
	 * live: how long a record evicted on another instance can still replay here where the
	 * store does not announce evictions (all but Redis). Positive.
	 */
	private Duration maxAge = Duration.ofSeconds(60);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public long getMaximumSize() {
		return this.maximumSize;
	}

	public void setMaximumSize(long maximumSize) {
		this.maximumSize = maximumSize;
	}

	public Duration getMaxAge() {
		return this.maxAge;
	}

	public void setMaxAge(Duration maxAge) {
		this.maxAge = maxAge;
	}

	@Override
	public boolean supports(Class<?> type) {
		return IdempotencyLocalCacheProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		IdempotencyLocalCacheProperties properties = (IdempotencyLocalCacheProperties) target;
		if (properties.getMaximumSize() < 1) {
			errors.rejectValue("maximumSize", "idempo.local-cache.maximum-size", "must be at least 1");
		}
		if (properties.getMaxAge() == null || properties.getMaxAge().isNegative() || properties.getMaxAge().isZero()
				|| properties.getMaxAge().toMillis() < 1) {
			errors.rejectValue("maxAge", "idempo.local-cache.max-age", "must be at least 1ms");
		}
	}

}
