package dev.idempo.method;

import java.lang.reflect.Method;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;

import dev.idempo.Idempotent;
import dev.idempo.core.AnnotationTtls;
import dev.idempo.core.Digests;
import dev.idempo.core.IdempotencyListener.Source;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationException;
import org.springframework.util.StringValueResolver;

/**
 * Runs the calls of {@code @Idempotent(key = ...)} methods: evaluates the key, takes the
 * fingerprint of the arguments, and hands the call to {@link IdempotentCalls}. Resolves
 * each method's settings (TTL with placeholders, transactional mode) once.
 *
 * @author idempo
 */
public final class IdempotentMethodRunner {

	private final IdempotentCalls calls;

	private final BeanFactory beanFactory;

	private final StringValueResolver placeholderResolver;

	private final Duration defaultTtl;

	private final boolean defaultTransactional;

	private final @Nullable String transactionalUnavailable;

	private final boolean verifyArguments;

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final Map<IdempotentMethod, Policy> policies = new ConcurrentHashMap<>();

	private volatile @Nullable ReactiveIdempotentCalls reactiveCalls;

	/**
	 * Creates a runner.
	 * @param calls runs the calls
	 * @param beanFactory resolves bean references ({@code @name}) in key expressions
	 * @param placeholderResolver resolves {@code ${...}} in TTLs
	 * @param defaultTtl the TTL of methods that set none ({@code idempo.response-ttl})
	 * @param defaultTransactional whether every method is transactional
	 * ({@code idempo.transactional})
	 * @param transactionalUnavailable why transactional methods cannot run here,
	 * {@code null} if they can
	 * @param verifyArguments whether a key used again with other arguments throws
	 * ({@code idempo.method.verify-arguments})
	 */
	public IdempotentMethodRunner(IdempotentCalls calls, BeanFactory beanFactory,
			StringValueResolver placeholderResolver, Duration defaultTtl, boolean defaultTransactional,
			@Nullable String transactionalUnavailable, boolean verifyArguments) {
		this.calls = calls;
		this.beanFactory = beanFactory;
		this.placeholderResolver = placeholderResolver;
		this.defaultTtl = defaultTtl;
		this.defaultTransactional = defaultTransactional;
		this.transactionalUnavailable = transactionalUnavailable;
		this.verifyArguments = verifyArguments;
	}

	/**
	 * Runs an intercepted call.
	 * @param method the idempotent method
	 * @param invocation the call
	 * @return its result, or the stored result of the call that ran with its key
	 * @throws Throwable what the method threw, or idempo's exceptions
	 */
	public @Nullable Object invoke(IdempotentMethod method, MethodInvocation invocation) throws Throwable {
		Policy policy = policy(method);
		Object[] arguments = invocation.getArguments();
		String key = key(method, invocation.getThis(), arguments);
		if (key == null) {
			if (method.annotation().required()) {
				throw new IllegalArgumentException("The key expression \"" + method.annotation().key() + "\" of the "
						+ "@Idempotent(required = true) method " + method + " gave no key (null or empty)");
			}
			return invocation.proceed();
		}
		IdempotentCalls.Call call = new IdempotentCalls.Call(Source.METHOD, method.scope(), key,
				this.verifyArguments ? fingerprint(method, arguments) : null, policy.resultType(), policy.ttl(),
				method.annotation().cacheResponse(), policy.transactional());
		return switch (method.resultKind()) {
			case VALUE -> this.calls.execute(call, invocation::proceed);
			case MONO -> reactiveCalls(method).execute(call, () -> proceedAgain(invocation));
			case FUTURE -> reactiveCalls(method).executeFuture(call, () -> proceedAgain(invocation));
		};
	}

	/**
	 * Runs reactive and future methods ({@link IdempotentMethod.ResultKind}); without it
	 * such methods fail the start-up.
	 * @param reactiveCalls the engine, or {@code null} where Reactor is missing
	 */
	public void setReactiveCalls(@Nullable ReactiveIdempotentCalls reactiveCalls) {
		this.reactiveCalls = reactiveCalls;
	}

	private ReactiveIdempotentCalls reactiveCalls(IdempotentMethod method) {
		ReactiveIdempotentCalls reactive = this.reactiveCalls;
		if (reactive == null) {
			throw new IllegalStateException(missingReactiveCalls(method));
		}
		return reactive;
	}

	private static String missingReactiveCalls(IdempotentMethod method) {
		return "@Idempotent on " + method + ", which returns " + method.method().getReturnType().getSimpleName()
				+ ", needs Project Reactor (io.projectreactor:reactor-core) on the class path";
	}

	/**
	 * Calls the method again for a later subscription (each one is a call of its own), on
	 * a copy of the invocation where the proxy allows one.
	 */
	private static @Nullable Object proceedAgain(MethodInvocation invocation) throws Throwable {
		if (invocation instanceof ProxyMethodInvocation proxied) {
			return proxied.invocableClone().proceed();
		}
		return invocation.proceed();
	}

	/**
	 * The resolved settings of a method, checked once.
	 * @param method the method
	 * @return its settings
	 * @throws IdempotentMethodException if its TTL is no positive duration, or it is
	 * transactional where transactional mode is not available
	 */
	public Policy policy(IdempotentMethod method) {
		Policy policy = this.policies.get(method);
		if (policy == null) {
			policy = this.policies.computeIfAbsent(method, this::resolve);
		}
		return policy;
	}

	private Policy resolve(IdempotentMethod method) {
		Idempotent annotation = method.annotation();
		// idempo.transactional is for methods whose work runs in the caller's thread
		boolean transactional = annotation.transactional()
				|| (this.defaultTransactional && method.resultKind() == IdempotentMethod.ResultKind.VALUE);
		if (transactional && this.transactionalUnavailable != null) {
			String how = annotation.transactional() ? "@Idempotent(transactional = true)" : "idempo.transactional=true";
			throw new IdempotentMethodException(method.toString(),
					how + " on " + method + " needs the postgres or mysql store: " + this.transactionalUnavailable,
					"Set idempo.store.type to postgres or mysql (the records must live in the database the method "
							+ "writes to), or remove transactional = true from the method"
							+ (annotation.transactional() ? "" : " and set idempo.transactional=false"));
		}
		if (transactional && !annotation.cacheResponse()) {
			throw new IdempotentMethodException(method.toString(),
					"idempo.transactional=true cannot apply to " + method + ", which has cacheResponse = false",
					"Remove cacheResponse = false, or set idempo.transactional=false.");
		}
		if (method.resultKind() != IdempotentMethod.ResultKind.VALUE && this.reactiveCalls == null) {
			throw new IdempotentMethodException(method.toString(), missingReactiveCalls(method),
					"Add io.projectreactor:reactor-core, or return the result itself.");
		}
		JavaType resultType = this.calls.results().javaType(method.resultType());
		return new Policy(ttl(method), transactional, resultType);
	}

	private Duration ttl(IdempotentMethod method) {
		return AnnotationTtls.resolve(method.annotation().ttl(), this.defaultTtl, this.placeholderResolver, method,
				(problem, action, cause) -> new IdempotentMethodException(method.toString(), problem, action));
	}

	private @Nullable String key(IdempotentMethod method, @Nullable Object target, Object[] arguments) {
		Method declared = method.method();
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
				new Root(declared, arguments, target, method.targetClass()), declared, arguments, this.parameterNames);
		context.setBeanResolver(new BeanFactoryResolver(this.beanFactory));
		Object value;
		try {
			value = method.key().getValue(context);
		}
		catch (EvaluationException ex) {
			throw new IllegalStateException("Could not evaluate the key expression \"" + method.annotation().key()
					+ "\" of the @Idempotent method " + method + ": " + ex.getMessage(), ex);
		}
		if (value == null) {
			return null;
		}
		String key = value.toString();
		return key.isEmpty() ? null : key;
	}

	/**
	 * A digest of the JSON of the arguments that are the call's input; an argument that
	 * cannot be written as JSON counts by its type only.
	 */
	private String fingerprint(IdempotentMethod method, Object[] arguments) {
		MessageDigest digest = Digests.sha256();
		Digests.field(digest, "call/1");
		Digests.field(digest, method.scope());
		for (int i = 0; i < arguments.length; i++) {
			if (!method.isFingerprinted(i)) {
				continue;
			}
			Object argument = MessagePayloads.payloadOf(arguments[i]);
			byte[] json;
			try {
				json = this.calls.results().json(argument);
			}
			catch (JacksonException ex) {
				json = ("!" + ((argument != null) ? argument.getClass().getName() : "null"))
					.getBytes(java.nio.charset.StandardCharsets.UTF_8);
			}
			Digests.field(digest, Integer.toString(i));
			Digests.field(digest, json);
		}
		return Digests.hex(digest);
	}

	/**
	 * The resolved settings of one method.
	 *
	 * @param ttl how long its results are kept
	 * @param transactional whether it runs in one transaction with its record
	 * @param resultType its result type, as JSON reads it
	 */
	public record Policy(Duration ttl, boolean transactional, JavaType resultType) {
	}

	/**
	 * The root object of key expressions: {@code #root.method}, {@code #root.args},
	 * {@code #root.target}, {@code #root.targetClass}.
	 *
	 * @param method the method
	 * @param args the arguments
	 * @param target the bean
	 * @param targetClass the bean's class
	 */
	public record Root(Method method, Object[] args, @Nullable Object target, Class<?> targetClass) {

		/**
		 * The method (for {@code #root.method}).
		 * @return the method
		 */
		public Method getMethod() {
			return this.method;
		}

		/**
		 * The arguments (for {@code #root.args}).
		 * @return the arguments
		 */
		public Object[] getArgs() {
			return this.args;
		}

		/**
		 * The bean (for {@code #root.target}).
		 * @return the bean
		 */
		public @Nullable Object getTarget() {
			return this.target;
		}

		/**
		 * The bean's class (for {@code #root.targetClass}).
		 * @return the class
		 */
		public Class<?> getTargetClass() {
			return this.targetClass;
		}

	}

}
