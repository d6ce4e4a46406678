package dev.idempo.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of the in-memory store ({@code idempo.store.memory.*}), apart
 * from {@link IdempotencyProperties} as Spring Boot keeps each concern's properties in a
 * class of its own. Checked when bound: a value out of range fails start-up naming the
 * property.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.store.memory")
public class IdempotencyMemoryStoreProperties implements Validator {

	/**
	 * Most completed responses kept; the oldest are evicted first. At least 1.
	 */
	private long maxEntries = 10_000;

	/**
	 * Most bytes of completed responses kept; the oldest are evicted first. Positive.
	 */
	private DataSize maxSize = DataSize.ofMegabytes(64);

	/**
	 * What a full store does: 'evict' drops the oldest records, even unexpired ones (a
	 * retry with such a key runs the handler again); 'refuse' keeps them and refuses new
	 * claims (503 until records expire).
	 */
	private WhenFull whenFull = WhenFull.EVICT;

	public WhenFull getWhenFull() {
		return this.whenFull;
	}

	public void setWhenFull(WhenFull whenFull) {
		this.whenFull = whenFull;
	}

	public long getMaxEntries() {
		return this.maxEntries;
	}

	public void setMaxEntries(long maxEntries) {
		this.maxEntries = maxEntries;
	}

	public DataSize getMaxSize() {
		return this.maxSize;
	}

	public void setMaxSize(DataSize maxSize) {
		this.maxSize = maxSize;
	}

	@Override
	public boolean supports(Class<?> type) {
		return IdempotencyMemoryStoreProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		IdempotencyMemoryStoreProperties properties = (IdempotencyMemoryStoreProperties) target;
		if (properties.getMaxEntries() < 1) {
			errors.rejectValue("maxEntries", "idempo.store.memory.max-entries", "must be at least 1");
		}
		if (properties.getMaxSize().toBytes() <= 0) {
			errors.rejectValue("maxSize", "idempo.store.memory.max-size", "must be positive");
		}
	}

	/**
	 * What a full in-memory store does.
	 */
	public enum WhenFull {

		/** Drop the oldest records, even unexpired ones. */
		EVICT,

		/** Keep them and refuse new claims. */
		REFUSE

	}

}
