package dev.idempo.method;

import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Intercepts the calls of {@code @Idempotent(key = ...)} methods through their Spring
 * proxies. Created with the infrastructure (before the application's beans), it looks up
 * what runs the calls when the first one arrives, so that the store and its dependencies
 * are created as ordinary beans.
 *
 * @author idempo
 */
public final class IdempotentMethodInterceptor implements MethodInterceptor {

	private final IdempotentMethods methods;

	private final Supplier<IdempotentMethodRunner> runner;

	/**
	 * Creates an interceptor.
	 * @param methods finds the idempotent methods
	 * @param runner supplies what runs the calls, asked once, at the first call
	 */
	public IdempotentMethodInterceptor(IdempotentMethods methods, Supplier<IdempotentMethodRunner> runner) {
		this.methods = methods;
		this.runner = SingletonSupplier.of(runner);
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopProxyUtils.ultimateTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		IdempotentMethod method = this.methods.find(invocation.getMethod(), targetClass);
		if (method == null) {
			return invocation.proceed();
		}
		return this.runner.get().invoke(method, invocation);
	}

}
