package dev.idempo.method;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;

import org.jspecify.annotations.Nullable;

import dev.idempo.Idempotent;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Finds the {@code @Idempotent(key = ...)} methods of bean classes, parses their key
 * expressions once, and rejects annotations idempo cannot honour, naming the method:
 * <ul>
 * <li>{@code @Idempotent} without a key on a method that is not a web handler;</li>
 * <li>a key on a web handler (its key is the {@code Idempotency-Key} header);</li>
 * <li>{@code @Idempotent} on a class that is not a controller;</li>
 * <li>a key expression that does not parse, or names a variable the method has no
 * parameter of ({@link KeyExpressions});</li>
 * <li>a method that a Spring proxy cannot intercept (not public, static or final), or
 * that returns an asynchronous result other than a {@code Mono} or a
 * {@code CompletableFuture} (its work would run after the claim ended; a {@code Flux} is
 * a stream, not one result), or returns one of those and is transactional;</li>
 * <li>{@code transactional = true} with {@code cacheResponse = false}.</li>
 * </ul>
 * Called by the advisor's pointcut while beans are proxied, so every singleton's methods
 * are checked at start-up. A controller annotated at type level protects its handlers
 * only; its other methods are left alone.
 *
 * @author idempo
 */
public final class IdempotentMethods {

	private static final String CONTROLLER = "org.springframework.stereotype.Controller";

	private static final String REQUEST_MAPPING = "org.springframework.web.bind.annotation.RequestMapping";

	/**
	 * Arguments of these packages are infrastructure (an acknowledgement, a consumer, a
	 * channel, a message with changing headers), not the call's input: they are left out
	 * of its fingerprint.
	 */
	private static final List<String> INFRASTRUCTURE_PACKAGES = List.of("org.springframework.", "org.apache.kafka.",
			"com.rabbitmq.", "jakarta.jms.", "javax.jms.", "software.amazon.", "io.awspring.", "org.apache.pulsar.",
			"java.util.function.", "java.io.", "java.nio.", "java.lang.Thread", "java.time.Clock",
			"java.util.concurrent.");

	private final Map<MethodKey, Optional<IdempotentMethod>> methods = new ConcurrentHashMap<>();

	private final KeyExpressions keyExpressions;

	/**
	 * Creates a registry that names parameters as key expressions see them at run time (a
	 * {@link DefaultParameterNameDiscoverer}, as {@link IdempotentMethodRunner} uses).
	 */
	public IdempotentMethods() {
		this(new DefaultParameterNameDiscoverer());
	}

	IdempotentMethods(ParameterNameDiscoverer parameterNames) {
		this.keyExpressions = new KeyExpressions(parameterNames);
	}

	/**
	 * The idempotent method that {@code method} is on a bean of {@code targetClass}.
	 * @param method the method, possibly as an interface declares it
	 * @param targetClass the bean's class
	 * @return the idempotent method, or {@code null} if the method is not protected here
	 * @throws IdempotentMethodException if it is annotated in a way idempo cannot honour
	 */
	public @Nullable IdempotentMethod find(Method method, Class<?> targetClass) {
		MethodKey key = new MethodKey(method, targetClass);
		Optional<IdempotentMethod> found = this.methods.get(key);
		if (found == null) {
			found = Optional.ofNullable(resolve(method, ClassUtils.getUserClass(targetClass)));
			this.methods.putIfAbsent(key, found);
		}
		return found.orElse(null);
	}

	/**
	 * Every idempotent method found so far (every one of the singletons, once the
	 * application has started).
	 * @return the methods
	 */
	public Collection<IdempotentMethod> all() {
		return this.methods.values().stream().flatMap(Optional::stream).distinct().toList();
	}

	/**
	 * Whether a class may have idempotent methods; cheap, for the pointcut's class
	 * filter.
	 * @param targetClass the class
	 * @return whether it may
	 */
	static boolean isCandidate(Class<?> targetClass) {
		return org.springframework.core.annotation.AnnotationUtils.isCandidateClass(targetClass, Idempotent.class);
	}

	private @Nullable IdempotentMethod resolve(Method method, Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(specific, Idempotent.class);
		boolean controller = MergedAnnotations.from(targetClass, SearchStrategy.TYPE_HIERARCHY).isPresent(CONTROLLER);
		if (annotation == null) {
			checkNotOnClass(specific, targetClass, controller);
			return null;
		}
		String name = describe(specific, targetClass);
		if (controller && MergedAnnotations.from(specific, SearchStrategy.TYPE_HIERARCHY).isPresent(REQUEST_MAPPING)) {
			checkHandler(annotation, name);
			return null;
		}
		checkMethod(specific, annotation, name);
		Expression key = this.keyExpressions.parse(specific, annotation.key(), name);
		return new IdempotentMethod(specific, targetClass, annotation, key, fingerprinted(specific));
	}

	/**
	 * A class-level annotation protects a controller's handlers; on any other class it
	 * would protect nothing.
	 */
	private static void checkNotOnClass(Method specific, Class<?> targetClass, boolean controller) {
		if (!controller && specific.getDeclaringClass() != Object.class
				&& AnnotatedElementUtils.hasAnnotation(targetClass, Idempotent.class)) {
			throw new IdempotentMethodException(targetClass.getName(),
					"@Idempotent on the class " + targetClass.getName() + ", which is not a controller: on a "
							+ "class it protects the handler methods of a controller only",
					"Annotate each method to protect with @Idempotent(key = \"...\") instead.");
		}
	}

	private static void checkHandler(Idempotent annotation, String name) {
		if (StringUtils.hasText(annotation.key())) {
			throw new IdempotentMethodException(name,
					"@Idempotent(key = \"" + annotation.key() + "\") on the web handler " + name
							+ ": a handler's key is the Idempotency-Key header of its requests",
					"Remove key from the annotation of the handler.");
		}
	}

	private static void checkMethod(Method specific, Idempotent annotation, String name) {
		if (!StringUtils.hasText(annotation.key())) {
			throw new IdempotentMethodException(name,
					"@Idempotent on " + name + ", which is not a web handler, has no key: outside the web layer "
							+ "the key comes from an expression over the method's arguments",
					"Add a key expression, such as @Idempotent(key = \"#order.id()\"), or make the method a "
							+ "handler of a @Controller.");
		}
		int modifiers = specific.getModifiers();
		if (!Modifier.isPublic(modifiers) || Modifier.isStatic(modifiers) || Modifier.isFinal(modifiers)) {
			throw new IdempotentMethodException(name,
					"@Idempotent on " + name + ", which a Spring proxy cannot intercept (it is not public, or it is "
							+ "static or final), so it would run unprotected",
					"Make the method public, non-static and non-final.");
		}
		checkResultType(specific, annotation, name);
		if (annotation.transactional() && !annotation.cacheResponse()) {
			throw new IdempotentMethodException(name,
					"@Idempotent(transactional = true) on " + name + " cannot be combined with "
							+ "cacheResponse = false: a transactional method's writes commit only together with the "
							+ "record that answers its later calls",
					"Remove cacheResponse = false, or make the method non-transactional.");
		}
	}

	/**
	 * A {@code Mono} or a {@code CompletableFuture} is claimed, stored and released by
	 * its outcome; a stream of results, or another asynchronous type, cannot be.
	 */
	private static void checkResultType(Method specific, Idempotent annotation, String name) {
		Class<?> type = specific.getReturnType();
		IdempotentMethod.ResultKind kind = IdempotentMethod.ResultKind.of(type);
		if (kind != IdempotentMethod.ResultKind.VALUE) {
			if (annotation.transactional()) {
				throw new IdempotentMethodException(name,
						"@Idempotent(transactional = true) on " + name + ", which returns " + type.getSimpleName()
								+ ": transactional mode needs the work to run in "
								+ "the transaction of the thread that calls it",
						"Return the result itself, or remove "
								+ "transactional = true (the record is then stored when the result arrives).");
			}
			return;
		}
		if (type.getName().equals("reactor.core.publisher.Flux")) {
			throw new IdempotentMethodException(name,
					"@Idempotent on " + name + ", which returns Flux: a stream of results is not stored as one result",
					"Return Mono<List<T>> (flux.collectList()), which is stored and replayed whole.");
		}
		if (isAsynchronous(type)) {
			throw new IdempotentMethodException(name,
					"@Idempotent on " + name + ", which returns " + type.getSimpleName()
							+ ": its work would go on after the call returned and its key was given back",
					"Return the result itself, a Mono or a CompletableFuture.");
		}
	}

	private static boolean[] fingerprinted(Method method) {
		Class<?>[] parameterTypes = method.getParameterTypes();
		boolean[] fingerprinted = new boolean[parameterTypes.length];
		for (int i = 0; i < parameterTypes.length; i++) {
			fingerprinted[i] = !isInfrastructure(parameterTypes[i])
					|| MessagePayloads.carriesPayload(parameterTypes[i]);
		}
		return fingerprinted;
	}

	static String describe(Method method, Class<?> targetClass) {
		StringBuilder description = new StringBuilder(targetClass.getName()).append('.')
			.append(method.getName())
			.append('(');
		Class<?>[] types = method.getParameterTypes();
		for (int i = 0; i < types.length; i++) {
			description.append((i > 0) ? ", " : "").append(types[i].getSimpleName());
		}
		return description.append(')').toString();
	}

	private static boolean isInfrastructure(Class<?> type) {
		String name = type.getName();
		return INFRASTRUCTURE_PACKAGES.stream().anyMatch(name::startsWith);
	}

	private static boolean isAsynchronous(Class<?> type) {
		return CompletionStage.class.isAssignableFrom(type) || Future.class.isAssignableFrom(type)
				|| ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null;
	}

	/** A method of a bean class; compares methods by identity first. */
	private static final class MethodKey {

		private final Method method;

		private final Class<?> targetClass;

		private final int hash;

		MethodKey(Method method, Class<?> targetClass) {
			this.method = method;
			this.targetClass = targetClass;
			this.hash = 31 * method.hashCode() + targetClass.hashCode();
		}

		@Override
		public boolean equals(@Nullable Object other) {
			return other == this || (other instanceof MethodKey that && this.targetClass == that.targetClass
					&& (this.method == that.method || this.method.equals(that.method)));
		}

		@Override
		public int hashCode() {
			return this.hash;
		}

		@Override
		public String toString() {
			return Objects.toString(this.method);
		}

	}

}
