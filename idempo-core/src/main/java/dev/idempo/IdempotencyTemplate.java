package dev.idempo;

import java.security.MessageDigest;
import java.time.Duration;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JavaType;

import dev.idempo.core.Digests;
import dev.idempo.core.IdempotencyListener.Source;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.method.IdempotentCalls;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.ResolvableType;
import org.springframework.util.Assert;

/**
 * Runs a piece of work at most once per (scope, key), for code that cannot use
 * {@link Idempotent @Idempotent(key = ...)}: each record of a batch, a step of a job. An
 * auto-configured bean.
 * <p>
 * The first call with a scope and key runs the work and stores its result (JSON through
 * the application's Jackson mapper) for the TTL ({@code idempo.response-ttl} unless the
 * options say otherwise); later calls with them return the stored result, read back as
 * the given type, without running the work. A call while another one holds the key throws
 * {@link IdempotencyInProgressException} at once. Work that throws stores nothing and
 * frees the key; its exception propagates unchanged (a checked exception thrown sneakily
 * too). The scope keeps keys of different uses apart, and is {@code template:<scope>} in
 * the {@code idempo} Actuator endpoint.
 * <p>
 * The same key with other input is not detected unless the call passes the input to
 * compare: {@code template.with(Options.defaults().request(order))}; a stored result of
 * another request then throws {@link IdempotencyKeyReusedException}.
 *
 * @author idempo
 */
public class IdempotencyTemplate {

	private final IdempotentCalls calls;

	private final Duration defaultTtl;

	private final Options options;

	/**
	 * Creates a template with the default options.
	 * @param calls runs the calls
	 * @param defaultTtl the TTL of results unless the options set one
	 * ({@code idempo.response-ttl})
	 */
	public IdempotencyTemplate(IdempotentCalls calls, Duration defaultTtl) {
		this(calls, defaultTtl, Options.defaults());
	}

	private IdempotencyTemplate(IdempotentCalls calls, Duration defaultTtl, Options options) {
		this.calls = calls;
		this.defaultTtl = defaultTtl;
		this.options = options;
	}

	/**
	 * A template that runs its calls with {@code options}; this one is unchanged.
	 * @param options the options
	 * @return the template
	 */
	public IdempotencyTemplate with(Options options) {
		if (options.transactional && !options.cacheResult) {
			throw new IllegalArgumentException("A transactional call must store its result: its writes commit only "
					+ "together with the record that answers its retries");
		}
		return new IdempotencyTemplate(this.calls, this.defaultTtl, options);
	}

	/**
	 * Runs {@code work} unless a call with {@code scope} and {@code key} already did.
	 * @param <T> the result type
	 * @param scope what the key belongs to, such as {@code "payment-batch"}
	 * @param key the idempotency key, such as the record's id
	 * @param resultType the result's type
	 * @param work the work
	 * @return the result of the work, or the stored result of the call that ran it
	 * @throws IdempotencyInProgressException if another call holds the key
	 * @throws IdempotencyKeyReusedException if the options carry a request that differs
	 * from the stored call's
	 */
	public <T> @Nullable T execute(String scope, String key, Class<T> resultType, Supplier<T> work) {
		return run(scope, key, ResolvableType.forClass(resultType), work::get);
	}

	/**
	 * Runs {@code work} unless a call with {@code scope} and {@code key} already did, for
	 * a generic result type such as {@code List<Receipt>}.
	 * @param <T> the result type
	 * @param scope what the key belongs to
	 * @param key the idempotency key
	 * @param resultType the result's type
	 * @param work the work
	 * @return the result of the work, or the stored result of the call that ran it
	 * @throws IdempotencyInProgressException if another call holds the key
	 * @throws IdempotencyKeyReusedException if the options carry a request that differs
	 * from the stored call's
	 */
	public <T> @Nullable T execute(String scope, String key, ParameterizedTypeReference<T> resultType,
			Supplier<T> work) {
		return run(scope, key, ResolvableType.forType(resultType), work::get);
	}

	/**
	 * Runs {@code work}, which returns nothing, unless a call with {@code scope} and
	 * {@code key} already did.
	 * @param scope what the key belongs to
	 * @param key the idempotency key
	 * @param work the work
	 * @throws IdempotencyInProgressException if another call holds the key
	 * @throws IdempotencyKeyReusedException if the options carry a request that differs
	 * from the stored call's
	 */
	public void execute(String scope, String key, Runnable work) {
		run(scope, key, ResolvableType.forClass(Void.class), () -> {
			work.run();
			return null;
		});
	}

	@SuppressWarnings("unchecked")
	private <T> @Nullable T run(String scope, String key, ResolvableType resultType, IdempotentCalls.Work work) {
		Assert.hasText(scope, "'scope' must not be empty");
		Assert.hasText(key, "'key' must not be empty");
		String templateScope = "template:" + scope;
		JavaType type = this.calls.results().javaType(resultType);
		Duration ttl = (this.options.ttl != null) ? this.options.ttl : this.defaultTtl;
		IdempotentCalls.Call call = new IdempotentCalls.Call(Source.TEMPLATE, templateScope, key,
				fingerprint(templateScope), type, ttl, this.options.cacheResult, this.options.transactional);
		try {
			return (T) this.calls.execute(call, work);
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			// a checked exception thrown sneakily by the work: unchanged, as promised
			throw IdempotencyTemplate.<RuntimeException>sneaky(ex);
		}
	}

	private @Nullable String fingerprint(String scope) {
		if (!this.options.verifyRequest) {
			return null;
		}
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, "template/1");
		Digests.field(digest, scope);
		Digests.field(digest, this.calls.results().json(this.options.request));
		return Digests.hex(digest);
	}

	@SuppressWarnings("unchecked")
	private static <E extends Throwable> E sneaky(Throwable ex) throws E {
		throw (E) ex;
	}

	/**
	 * Per-call options: immutable, each method returns a copy with one setting changed.
	 */
	public static final class Options {

		private static final Options DEFAULTS = new Options(null, false, true, false, null);

		private final @Nullable Duration ttl;

		private final boolean transactional;

		private final boolean cacheResult;

		private final boolean verifyRequest;

		private final @Nullable Object request;

		private Options(@Nullable Duration ttl, boolean transactional, boolean cacheResult, boolean verifyRequest,
				@Nullable Object request) {
			this.ttl = ttl;
			this.transactional = transactional;
			this.cacheResult = cacheResult;
			this.verifyRequest = verifyRequest;
			this.request = request;
		}

		/**
		 * The defaults: {@code idempo.response-ttl}, not transactional, result stored, no
		 * request compared.
		 * @return the defaults
		 */
		public static Options defaults() {
			return DEFAULTS;
		}

		/**
		 * How long the result is kept.
		 * @param ttl a positive duration of at most 100 years
		 * @return the options with it
		 */
		public Options ttl(Duration ttl) {
			Assert.isTrue(IdempotencySettings.isValidTtl(ttl), "'ttl' must be positive and at most 36500d");
			return new Options(ttl, this.transactional, this.cacheResult, this.verifyRequest, this.request);
		}

		/**
		 * Whether the work runs inside a transaction of the application's transaction
		 * manager in which its record is written, so that its writes and the record
		 * commit together or not at all (postgres and mysql stores only).
		 * @param transactional whether transactional
		 * @return the options with it
		 */
		public Options transactional(boolean transactional) {
			return new Options(this.ttl, transactional, this.cacheResult, this.verifyRequest, this.request);
		}

		/**
		 * Whether the result is stored and returned to later calls; {@code false} only
		 * keeps two calls with the key from running at the same time.
		 * @param cacheResult whether to store the result
		 * @return the options with it
		 */
		public Options cacheResult(boolean cacheResult) {
			return new Options(this.ttl, this.transactional, cacheResult, this.verifyRequest, this.request);
		}

		/**
		 * The input of the call, compared (as a digest of its JSON) with the input of the
		 * call that stored the key's result: another input throws
		 * {@link IdempotencyKeyReusedException} rather than return that result.
		 * @param request the input, written as JSON
		 * @return the options with it
		 */
		public Options request(@Nullable Object request) {
			return new Options(this.ttl, this.transactional, this.cacheResult, true, request);
		}

	}

}
