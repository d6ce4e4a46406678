package dev.idempo.testsupport;

import java.util.Locale;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Where test servers come from, for every store, as {@value #VARIABLE} says.
 *
 * @author idempo
 */
public enum TestServerMode {

	/** A configured or local server if one answers, else an embedded one. */
	AUTO,

	/** Only a configured or local server; fail if there is none. */
	EXTERNAL,

	/** Always an embedded server. */
	EMBEDDED;

	/** The environment variable that forces a mode. */
	public static final String VARIABLE = "IDEMPO_TEST_SERVERS";

	/**
	 * The mode of this test run.
	 * @return the mode, {@link #AUTO} unless {@value #VARIABLE} says otherwise
	 * @throws IllegalStateException if the variable holds something else
	 */
	public static TestServerMode current() {
		String value = System.getenv(VARIABLE);
		if (value == null || value.isBlank()) {
			return AUTO;
		}
		try {
			return valueOf(value.trim().toUpperCase(Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(
					VARIABLE + "=" + value + " is not one of external, embedded, auto (the default)");
		}
	}

	/**
	 * Resolves a server once per test JVM: every later call returns the same server, or
	 * fails with the same reason.
	 * @param <T> the server type
	 * @param resolver finds or starts the server
	 * @return the memoizing supplier
	 */
	static <T> Supplier<T> once(Supplier<T> resolver) {
		return new Supplier<>() {

			private @Nullable T value;

			private @Nullable RuntimeException failure;

			@Override
			public synchronized T get() {
				if (this.value == null && this.failure == null) {
					try {
						this.value = resolver.get();
					}
					catch (RuntimeException ex) {
						this.failure = ex;
					}
				}
				if (this.failure != null) {
					// every test that needs the server fails with the same reason
					throw new IllegalStateException(this.failure.getMessage(), this.failure);
				}
				return this.value;
			}

		};
	}

}
