/**
 * Memory under many large concurrent bodies on WebFlux, in a JVM with a small heap.
 */
@NullMarked
package dev.idempo.webflux.memory;

import org.jspecify.annotations.NullMarked;
