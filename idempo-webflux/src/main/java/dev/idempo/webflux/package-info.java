/**
 * The Idempotency-Key request flow for annotated Spring WebFlux handlers
 * ({@link dev.idempo.webflux.IdempotencyWebFilter}), on the non-blocking store SPI
 * ({@link dev.idempo.store.ReactiveLockingStore}).
 */
@NullMarked
package dev.idempo.webflux;

import org.jspecify.annotations.NullMarked;
