/**
 * The Idempotency-Key request flow for annotated Spring WebFlux handlers and the
 * functional endpoints that {@code idempo.routes} names
 * ({@link dev.idempo.webflux.IdempotencyWebFilter}), and for Spring Cloud Gateway
 * (server-webflux) routes ({@link dev.idempo.webflux.IdempotencyGatewayFilterFactory},
 * {@link dev.idempo.webflux.IdempotencyRoutesGlobalFilter}), on the non-blocking store
 * SPI ({@link dev.idempo.store.ReactiveLockingStore}).
 */
@NullMarked
package dev.idempo.webflux;

import org.jspecify.annotations.NullMarked;
