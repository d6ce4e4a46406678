/**
 * Idempotent calls outside the web layer: {@code @Idempotent(key = ...)} on bean methods
 * (a Spring AOP advisor) and the {@code IdempotencyTemplate}, on one engine.
 */
@NullMarked
package dev.idempo.method;

import org.jspecify.annotations.NullMarked;
