package dev.idempo.method;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.stream.Collectors;

import dev.idempo.Idempotent;

import org.springframework.core.ResolvableType;
import org.springframework.expression.Expression;

/**
 * What is known at start-up of one {@code @Idempotent(key = ...)} method of one bean
 * class: its annotation, its parsed key expression, its declared result type and the
 * scope its records belong to.
 *
 * @author idempo
 */
public final class IdempotentMethod {

	private final Method method;

	private final Class<?> targetClass;

	private final Idempotent annotation;

	private final Expression key;

	private final ResolvableType resultType;

	private final ResultKind resultKind;

	private final String scope;

	private final boolean[] fingerprinted;

	IdempotentMethod(Method method, Class<?> targetClass, Idempotent annotation, Expression key,
			boolean[] fingerprinted) {
		this.method = method;
		this.targetClass = targetClass;
		this.annotation = annotation;
		this.key = key;
		ResolvableType declared = ResolvableType.forMethodReturnType(method, targetClass);
		this.resultKind = ResultKind.of(declared.toClass());
		this.resultType = (this.resultKind != ResultKind.VALUE) ? declared.getGeneric(0) : declared;
		this.scope = scope(method, targetClass);
		this.fingerprinted = fingerprinted;
	}

	/**
	 * The scope of a method's records, as the {@code idempo} Actuator endpoint takes it:
	 * {@code method:<bean class>#<method>(<parameter types>)}, such as
	 * {@code method:com.example.Settlements#settle(java.time.LocalDate)}.
	 * @param method the method
	 * @param targetClass the bean's class
	 * @return the scope
	 */
	public static String scope(Method method, Class<?> targetClass) {
		return "method:" + targetClass.getName() + "#" + method.getName() + "("
				+ Arrays.stream(method.getParameterTypes()).map(Class::getName).collect(Collectors.joining(",")) + ")";
	}

	/**
	 * The method, as declared by the bean's class.
	 * @return the method
	 */
	public Method method() {
		return this.method;
	}

	/**
	 * The bean's class.
	 * @return the class
	 */
	public Class<?> targetClass() {
		return this.targetClass;
	}

	/**
	 * The annotation.
	 * @return the annotation
	 */
	public Idempotent annotation() {
		return this.annotation;
	}

	/**
	 * The parsed key expression.
	 * @return the expression
	 */
	public Expression key() {
		return this.key;
	}

	/**
	 * The declared result type, resolved against the bean's class.
	 * @return the result type
	 */
	public ResolvableType resultType() {
		return this.resultType;
	}

	/**
	 * How the method hands over its result: as its return value, or later through a
	 * {@code Mono} or a {@code CompletableFuture}.
	 * @return the kind of result
	 */
	public ResultKind resultKind() {
		return this.resultKind;
	}

	/**
	 * How an idempotent method hands over its result.
	 */
	public enum ResultKind {

		/** The return value is the result. */
		VALUE,

		/**
		 * A {@code Mono} of the result: each subscription is a call, claimed when it is
		 * subscribed.
		 */
		MONO,

		/**
		 * A {@code CompletableFuture} (or {@code CompletionStage}) of the result, claimed
		 * when the method is called.
		 */
		FUTURE;

		static final String MONO_CLASS = "reactor.core.publisher.Mono";

		static ResultKind of(Class<?> returnType) {
			if (returnType == java.util.concurrent.CompletableFuture.class
					|| returnType == java.util.concurrent.CompletionStage.class) {
				return FUTURE;
			}
			return returnType.getName().equals(MONO_CLASS) ? MONO : VALUE;
		}

	}

	/**
	 * What its records belong to.
	 * @return the scope
	 */
	public String scope() {
		return this.scope;
	}

	/**
	 * Whether the argument at {@code index} is part of the call's fingerprint.
	 * @param index the parameter index
	 * @return whether it is fingerprinted
	 */
	public boolean isFingerprinted(int index) {
		return this.fingerprinted[index];
	}

	@Override
	public String toString() {
		return this.targetClass.getName() + "." + this.method.getName() + "("
				+ Arrays.stream(this.method.getParameterTypes())
					.map(Class::getSimpleName)
					.collect(Collectors.joining(", "))
				+ ")";
	}

}
