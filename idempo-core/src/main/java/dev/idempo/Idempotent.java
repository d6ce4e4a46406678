package dev.idempo;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a Spring MVC handler method, or every handler method of a controller, as
 * protected by an {@code Idempotency-Key}; or, with a {@link #key() key} expression, any
 * public method of a Spring bean that is not a web handler (a message listener, a
 * scheduled job, a service method).
 * <p>
 * A {@code POST}, {@code PUT}, {@code PATCH} or {@code DELETE} request that carries a key
 * runs the handler at most once per (caller, key) until the record expires; a retry with
 * the same key and the same request gets the first response back, byte for byte, with
 * {@code Idempotent-Replayed: true}. {@code GET}, {@code HEAD}, {@code OPTIONS} and
 * {@code TRACE} requests pass through untouched. An annotation on the method wins over
 * one on its class.
 * <p>
 * On a method with a {@link #key() key}, the first call with a key value runs the method
 * and stores its return value; later calls with that key return the stored value without
 * running the method, and a call while another one holds the key throws
 * {@link IdempotencyInProgressException}. Calls reach the method through its Spring
 * proxy: a call from the bean itself ({@code this.method()}) is not intercepted.
 *
 * @author idempo
 * @see IdempotencyTemplate
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

	/**
	 * How long a completed response is kept and replayed, as a Spring duration string
	 * such as {@code "24h"}, {@code "PT30M"} or {@code "90s"}. {@code ${...}}
	 * placeholders are resolved against the environment. Empty means
	 * {@code idempo.response-ttl}. Positive and at most {@code 36500d} (100 years, what
	 * every store can keep).
	 * @return the time to live of the stored response
	 */
	String ttl() default "";

	/**
	 * Whether the response is stored and replayed. {@code false} only locks the key while
	 * the handler runs: a concurrent duplicate gets {@code 409}, a later one runs the
	 * handler again.
	 * @return whether to store and replay the response
	 */
	boolean cacheResponse() default true;

	/**
	 * Whether a request without a key is rejected with {@code 400}. When {@code false}
	 * (and {@code idempo.key-required} is not set), a request without a key runs
	 * unprotected.
	 * @return whether the key is required
	 */
	boolean required() default false;

	/**
	 * Whether the handler runs inside one transaction of the application's
	 * {@code PlatformTransactionManager} that also writes the response record, so that
	 * the handler's database writes and the record commit together or not at all; the
	 * response is sent only after the commit. Only with {@code idempo.store.type}
	 * {@code postgres} or {@code mysql}; on any other store the application fails at
	 * start-up. {@code idempo.transactional=true} turns it on for every
	 * {@code @Idempotent} handler.
	 * @return whether the handler and its record share one transaction
	 */
	boolean transactional() default false;

	/**
	 * A SpEL expression that gives the idempotency key of a call, for methods that are
	 * not web handlers (whose key is the {@code Idempotency-Key} header): arguments by
	 * name ({@code #order.id()}) or position ({@code #p0}, {@code #a0}),
	 * {@code #root.args}, {@code #root.method}, {@code #root.target} and bean references
	 * ({@code @clock}). A {@code null} or empty value runs the call unprotected, unless
	 * {@link #required()}, which throws {@link IllegalArgumentException}. The expression
	 * is parsed at start-up. Empty (the default) on a web handler; on any other method an
	 * empty key fails the application at start-up.
	 * @return the key expression
	 */
	String key() default "";

}
