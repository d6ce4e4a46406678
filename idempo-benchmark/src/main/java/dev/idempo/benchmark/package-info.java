/**
 * The application that {@code benchmark/run.sh} measures with each store, on Spring MVC
 * or (started as a reactive web application) on Spring WebFlux: the same handler with and
 * without {@code @Idempotent}, a payment insert with and without it, a handler held in
 * flight for the 409 case, and control endpoints for the script.
 */
@NullMarked
package dev.idempo.benchmark;

import org.jspecify.annotations.NullMarked;
