package dev.idempo.web;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * Reads and caches the {@link Idempotent} settings of handler methods: method-level wins
 * over class-level, TTL placeholders are resolved once.
 *
 * @author idempo
 */
public class IdempotentHandlers {

	/**
	 * Keyed by method and bean type, not by HandlerMethod, which differs per prototype
	 * bean.
	 */
	private final Map<HandlerKey, Optional<Policy>> policies = new ConcurrentHashMap<>();

	private final StringValueResolver placeholderResolver;

	private final Duration defaultTtl;

	/**
	 * Creates a registry.
	 * @param placeholderResolver resolves {@code ${...}} in TTLs
	 * @param defaultTtl the TTL of handlers that do not set one
	 */
	public IdempotentHandlers(StringValueResolver placeholderResolver, Duration defaultTtl) {
		this.placeholderResolver = placeholderResolver;
		this.defaultTtl = defaultTtl;
	}

	/**
	 * The policy of a handler method.
	 * @param handlerMethod the handler method
	 * @return its policy, or {@code null} if it is not {@link Idempotent}
	 * @throws IllegalStateException if its TTL is not a positive duration
	 */
	public @Nullable Policy policy(HandlerMethod handlerMethod) {
		HandlerKey key = new HandlerKey(handlerMethod.getMethod(), handlerMethod.getBeanType());
		Optional<Policy> policy = this.policies.get(key);
		if (policy == null) {
			policy = this.policies.computeIfAbsent(key, (k) -> Optional.ofNullable(resolve(handlerMethod)));
		}
		return policy.orElse(null);
	}

	private @Nullable Policy resolve(HandlerMethod handlerMethod) {
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getMethod(), Idempotent.class);
		if (idempotent == null) {
			idempotent = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getBeanType(), Idempotent.class);
		}
		if (idempotent == null) {
			return null;
		}
		return new Policy(ttl(idempotent, handlerMethod), idempotent.cacheResponse(), idempotent.required(),
				isStreaming(handlerMethod.getReturnType()));
	}

	private Duration ttl(Idempotent idempotent, HandlerMethod handlerMethod) {
		if (!StringUtils.hasText(idempotent.ttl())) {
			return this.defaultTtl;
		}
		String value = null;
		try {
			value = this.placeholderResolver.resolveStringValue(idempotent.ttl());
			Duration ttl = DurationStyle.detectAndParse((value != null) ? value.trim() : "");
			if (ttl.isNegative() || ttl.isZero()) {
				throw new IllegalArgumentException("it must be positive");
			}
			return ttl;
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException(
					"@Idempotent(ttl = \"" + idempotent.ttl() + "\") on " + handlerMethod + " is not a valid duration"
							+ ((value != null && !value.equals(idempotent.ttl())) ? " (resolved to \"" + value + "\")"
									: "")
							+ ": use a positive Spring duration such as \"24h\", \"PT30M\" or \"90s\"",
					ex);
		}
	}

	private static boolean isStreaming(MethodParameter returnType) {
		Class<?> type = returnType.getParameterType();
		if (HttpEntity.class.isAssignableFrom(type)) {
			Class<?> bodyType = ResolvableType.forMethodParameter(returnType).getGeneric(0).resolve();
			if (bodyType == null) {
				return false;
			}
			type = bodyType;
		}
		if (StreamingResponseBody.class.isAssignableFrom(type) || ResponseBodyEmitter.class.isAssignableFrom(type)) {
			return true;
		}
		// Spring MVC writes single-value reactive types (Mono) like a DeferredResult:
		// stored
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(type);
		return adapter != null && adapter.isMultiValue();
	}

	/**
	 * Looked up for every POST, PUT, PATCH and DELETE, protected or not: it compares the
	 * method by identity before {@code Method.equals} (which compares return and
	 * parameter types every time), and keeps its hash. A record's generated equals and
	 * hashCode showed in profiles of unannotated handlers.
	 */
	private static final class HandlerKey {

		private final Method method;

		private final Class<?> beanType;

		private final int hash;

		HandlerKey(Method method, Class<?> beanType) {
			this.method = method;
			this.beanType = beanType;
			this.hash = 31 * method.hashCode() + beanType.hashCode();
		}

		@Override
		public boolean equals(Object other) {
			return other == this || (other instanceof HandlerKey that && this.beanType == that.beanType
					&& (this.method == that.method || this.method.equals(that.method)));
		}

		@Override
		public int hashCode() {
			return this.hash;
		}

	}

	/**
	 * The resolved settings of one {@link Idempotent} handler method.
	 *
	 * @param ttl how long its responses are kept
	 * @param cacheResponse whether its responses are stored
	 * @param required whether it requires a key
	 * @param streaming whether it streams its response
	 */
	public record Policy(Duration ttl, boolean cacheResponse, boolean required, boolean streaming) {
	}

}
