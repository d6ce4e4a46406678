package dev.idempo.method;

import java.lang.reflect.Method;

import org.aopalliance.aop.Advice;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.Ordered;

/**
 * The Spring AOP advisor of {@code @Idempotent(key = ...)} methods: applied by the
 * application's auto-proxy creator (Spring Boot registers one; no AspectJ needed) to
 * every bean with such a method. Its pointcut checks every method of every bean class
 * when the bean is created, so that a misplaced annotation fails the start-up.
 * <p>
 * Its order, {@link #DEFAULT_ORDER} unless {@code idempo.method.advisor-order} says
 * otherwise, puts it outside (before) advisors of the default order: Spring's
 * {@code @Transactional} and Spring Retry's {@code @Retryable} on the same method then
 * run inside the claim, so that the claim outlives the method's transaction and every
 * attempt of a retry belongs to one claim. Spring Framework's own {@code @Retryable} (and
 * {@code @ConcurrencyLimit}) are added before all existing advisors whatever their order,
 * so they run outside the claim: each attempt claims the key afresh, and an attempt that
 * failed gave it back.
 *
 * @author idempo
 */
public final class IdempotentMethodAdvisor extends AbstractPointcutAdvisor {

	/**
	 * The default order: well before {@link Ordered#LOWEST_PRECEDENCE}, the default of
	 * transaction and retry advisors.
	 */
	public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 1000;

	private final transient Pointcut pointcut;

	private final transient Advice advice;

	/**
	 * Creates an advisor.
	 * @param methods finds the idempotent methods
	 * @param interceptor intercepts their calls
	 * @param order the order of the advisor
	 */
	public IdempotentMethodAdvisor(IdempotentMethods methods, IdempotentMethodInterceptor interceptor, int order) {
		this.pointcut = new IdempotentMethodPointcut(methods);
		this.advice = interceptor;
		setOrder(order);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.advice;
	}

	private static final class IdempotentMethodPointcut extends StaticMethodMatcherPointcut {

		private final IdempotentMethods methods;

		IdempotentMethodPointcut(IdempotentMethods methods) {
			this.methods = methods;
			setClassFilter(IdempotentMethods::isCandidate);
		}

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return this.methods.find(method, targetClass) != null;
		}

	}

}
