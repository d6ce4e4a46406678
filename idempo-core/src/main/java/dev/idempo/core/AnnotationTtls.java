package dev.idempo.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

/**
 * Reads the {@code ttl} of an {@link dev.idempo.Idempotent} annotation, the same way for
 * Spring MVC handlers, WebFlux handlers and methods: placeholders resolved, then a Spring
 * duration ({@code 24h}, {@code PT30M}) that is positive and at most
 * {@link IdempotencySettings#MAX_TTL}.
 *
 * @author idempo
 */
public final class AnnotationTtls {

	private AnnotationTtls() {
	}

	/**
	 * The TTL an annotation declares.
	 * @param declared the annotation's {@code ttl}, empty for the default
	 * @param defaultTtl the TTL when none is declared
	 * @param placeholders resolves {@code ${...}}
	 * @param where what carries the annotation, for the message
	 * @param failure the exception the caller throws for an invalid TTL
	 * @return the TTL
	 */
	public static Duration resolve(String declared, Duration defaultTtl, StringValueResolver placeholders, Object where,
			Failure failure) {
		if (!StringUtils.hasText(declared)) {
			return defaultTtl;
		}
		String value = null;
		try {
			value = placeholders.resolveStringValue(declared);
			Duration ttl = DurationStyle.detectAndParse((value != null) ? value.trim() : "");
			if (!IdempotencySettings.isValidTtl(ttl)) {
				throw new IllegalArgumentException("it must be positive and at most 36500d (100 years)");
			}
			return ttl;
		}
		catch (RuntimeException ex) {
			throw failure.create(
					"@Idempotent(ttl = \"" + declared + "\") on " + where + " is not a valid duration"
							+ ((value != null && !value.equals(declared)) ? " (resolved to \"" + value + "\")" : "")
							+ ": " + ex.getMessage(),
					"Use a positive Spring duration of at most 36500d such as \"24h\", \"PT30M\" " + "or \"90s\".", ex);
		}
	}

	/**
	 * Creates the exception for an invalid TTL.
	 */
	@FunctionalInterface
	public interface Failure {

		/**
		 * Creates the exception.
		 * @param problem what is wrong
		 * @param action what to do
		 * @param cause why parsing failed
		 * @return the exception to throw
		 */
		RuntimeException create(String problem, String action, @Nullable RuntimeException cause);

	}

}
